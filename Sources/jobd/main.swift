import JobDaemon

// Before any other thread exists, so that every thread inherits the mask
// and SIGHUP/SIGTERM/SIGINT reach only jobd's signal thread.
SignalWatcher.blockHandledSignals()
JobdCommand.runFromCommandLine()
