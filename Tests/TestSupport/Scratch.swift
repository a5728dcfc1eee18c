import Foundation

// What every test target of jobd shares: where the repository is, and
// scratch folders that do not outlive the test process.

/// The repository root, found from this file's path.
public let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

/// The one folder this test process keeps its scratch folders in; removed,
/// with all of them, when the process exits.
private let scratchRoot: String = {
    let path = NSTemporaryDirectory() + "jobd-tests-" + UUID().uuidString
    atexit { try? FileManager.default.removeItem(atPath: scratchRoot) }
    return path
}()

/// A fresh, empty folder under this process's scratch root, so no test
/// leaves folders behind in the temporary folder.
public func makeTemporaryFolder() throws -> String {
    let path = scratchRoot + "/" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

public func write(_ text: String, to path: String) throws {
    try text.write(toFile: path, atomically: true, encoding: .utf8)
}
