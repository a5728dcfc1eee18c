import JobValues

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension RunningProcess.State {
    /// The outcome of a finished run: a stop the runner caused wins over the
    /// exit status it led to; otherwise status 0 fulfils, anything else
    /// rejects with the status (or signal) and the stderr tail.
    func makeResult(termination: ProcessTermination, process: RunningProcess) -> Result<ProcessOutcome, ProcessError> {
        let command = process.command
        let tail = errorTail.bytes
        func failure(
            _ code: ProcessError.Code, _ message: String, errno: Int32? = nil
        ) -> Result<ProcessOutcome, ProcessError> {
            .failure(
                ProcessError(
                    code: code, message: message, command: command, termination: termination,
                    stderrTail: tail, errno: errno, killed: killSent))
        }

        if let stopReason {
            var ending = ""
            switch (termSent, killSent) {
            case (true, true):
                ending = "; its process group got SIGTERM, then SIGKILL"
                if graceUsed > .zero { ending += " \(graceUsed.jobdText) later" }
            case (true, false): ending = "; its process group got SIGTERM"
            case (false, true): ending = "; its process group got SIGKILL"
            case (false, false): break
            }
            ending += " (the program \(termination))"
            switch stopReason {
            case let .timedOut(limit):
                return failure(.timedOut, "`\(command)` timed out after \(limit.jobdText)\(ending)")
            case .cancelled:
                return failure(.cancelled, "`\(command)` was cancelled\(ending)")
            case .outputLimit:
                let limit = ByteSize(bytes: process.outputLimit)
                return failure(
                    .outputLimitExceeded,
                    "`\(command)` wrote more than \(limit) to stdout, the limit for a stage's value, so its output was refused (not truncated)\(ending); make it write less or raise the limit"
                )
            case let .ioFailed(error):
                return failure(
                    .ioFailed,
                    "reading the output of `\(command)` failed: \(String(cString: strerror(error)))\(ending)",
                    errno: error)
            }
        }

        switch termination {
        case .exited(0):
            return .success(
                ProcessOutcome(
                    output: output.bytes, stderrTail: tail, processID: process.processID ?? 0,
                    wroteAllInput: wroteAllInput, elapsed: ContinuousClock.now - process.started))
        case .exited:
            return failure(.nonZeroExit, "`\(command)` \(termination)")
        case .signaled:
            return failure(.signaled, "`\(command)` \(termination)")
        case .unknown:
            return failure(
                .nonZeroExit,
                "`\(command)` \(termination): something else in jobd reaped it (is SIGCHLD ignored?)")
        }
    }
}
