import Glibc

/// glibc's `malloc_trim(0)`: hands the memory its arenas hold free back to
/// the system. Swift's Glibc module does not export `<malloc.h>`, so the
/// function is looked up once by name; where it is missing this does nothing.
enum MemoryTrim {
    private typealias Trim = @convention(c) (Int) -> Int32

    private static let trim: Trim? = {
        // RTLD_DEFAULT: the process's global symbols.
        guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: Trim.self)
    }()

    static func releaseFreeMemory() {
        _ = trim?(0)
    }
}
