/// The jobd daemon (work in progress).
public enum JobDaemon {}
