import JobDaemon

// First, so that a SIGTERM, SIGINT or SIGHUP that arrives while jobd starts
// waits for the signal service instead of ending jobd (SignalWatcher).
SignalWatcher.catchEarly()
await JobdCommand.runFromCommandLine()
