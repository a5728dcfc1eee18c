import JobDaemon
