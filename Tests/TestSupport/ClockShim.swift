import Foundation
import Spawn
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A preload library that moves a process's wall clock (CLOCK_REALTIME
/// through `clock_gettime`, `gettimeofday` and `time`; Foundation's `Date`
/// reads `clock_gettime`) by `JOBD_TEST_CLOCK_OFFSET` seconds, and leaves
/// the monotonic clocks alone: a host whose clock is off, without touching
/// the test machine's. Built once per test process with `cc`.
public enum ClockShim {
    private static let built = Mutex<Result<String, TestFailure>?>(nil)

    /// The environment that runs a child `seconds` off the real time.
    public static func environment(offset seconds: Int) throws -> [String: String] {
        ["LD_PRELOAD": try library(), "JOBD_TEST_CLOCK_OFFSET": String(seconds)]
    }

    /// The path of the built library.
    public static func library() throws -> String {
        try built.withLock { built in
            if built == nil { built = build() }
            return try built!.get()
        }
    }

    private static func build() -> Result<String, TestFailure> {
        let folder = NSTemporaryDirectory() + "jobd-clock-shim-\(getpid())"
        let (source, library) = (folder + "/shim.c", folder + "/shim.so")
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try Self.source.write(toFile: source, atomically: true, encoding: .utf8)
            let built = try SpawnedProcess.run(
                "/usr/bin/cc", ["-shared", "-fPIC", "-O2", "-o", library, source, "-ldl"])
            guard built.termination.status == 0 else {
                return .failure(TestFailure("cc could not build the clock shim: \(built.stderrText)"))
            }
            return .success(library)
        } catch {
            return .failure(TestFailure("cannot build the clock shim: \(error)"))
        }
    }

    private static let source = """
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <stdlib.h>
        #include <sys/time.h>
        #include <time.h>

        static long offset(void) {
            const char *text = getenv("JOBD_TEST_CLOCK_OFFSET");
            return text ? strtol(text, NULL, 10) : 0;
        }

        int clock_gettime(clockid_t id, struct timespec *ts) {
            static int (*real)(clockid_t, struct timespec *);
            if (!real) real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
            int result = real(id, ts);
            if (result == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) ts->tv_sec += offset();
            return result;
        }

        int gettimeofday(struct timeval *tv, void *tz) {
            struct timespec ts;
            (void)tz;
            if (clock_gettime(CLOCK_REALTIME, &ts) != 0) return -1;
            if (tv) { tv->tv_sec = ts.tv_sec; tv->tv_usec = ts.tv_nsec / 1000; }
            return 0;
        }

        time_t time(time_t *out) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            if (out) *out = ts.tv_sec;
            return ts.tv_sec;
        }

        """
}
