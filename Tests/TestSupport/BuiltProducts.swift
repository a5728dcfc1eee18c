import Foundation

/// The path of this package's executable `name` (`jobd`, `jobctl`), built
/// beside the test bundle; a test target that runs one lists it among its
/// dependencies so that `swift test` builds it.
public func builtProduct(_ name: String) -> String {
    let bundle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    for candidate in [bundle, bundle.deletingLastPathComponent()] {
        let path = candidate.appendingPathComponent(name).path
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return repositoryRoot + "/.build/debug/" + name
}
