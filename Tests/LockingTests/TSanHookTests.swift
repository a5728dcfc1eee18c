import CLocking
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Locking announces locks to ThreadSanitizer through hooks found
/// when it is loaded. Under `swift test --sanitize=thread` the hooks must be
/// the runtime's (else every lock hand-off is invisible to TSan and a clean
/// run proves nothing); in a plain build they must be null.
@Suite struct TSanHookTests {
    @Test func theHooksAreFoundExactlyWhenThreadSanitizerIsLinkedIn() {
        // RTLD_DEFAULT (null): search the whole process.
        let acquire = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_acquire")
        let release = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_release")
        #expect((acquire == nil) == (release == nil))
        #expect(locking_tsan_acquire_hook_address() == acquire)
        #expect(locking_tsan_release_hook_address() == release)
    }
}
