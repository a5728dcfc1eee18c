import Foundation

/// Where jobd and jobctl find jobd.yaml: `--config PATH`, else
/// `$JOBD_CONFIG`, else `./config/jobd.yaml`, else `/etc/jobd/jobd.yaml`.
///
/// An explicit choice (the option or the variable) that names a missing file
/// is an error: it never silently falls through to another file.
public enum ConfigLocator {
    public static let environmentVariable = "JOBD_CONFIG"
    public static let workingDirectoryCandidate = "config/jobd.yaml"
    public static let systemPath = "/etc/jobd/jobd.yaml"

    /// The chosen config file and why it was chosen.
    public struct Location: Sendable, Hashable, CustomStringConvertible {
        public enum Reason: Sendable, Hashable {
            /// Given with `--config`.
            case commandLine
            /// Named by `$JOBD_CONFIG`.
            case environment
            /// `./config/jobd.yaml` in the current directory.
            case workingDirectory
            /// `/etc/jobd/jobd.yaml`.
            case system
        }

        /// Absolute and normalized.
        public var path: String
        public var reason: Reason

        public init(path: String, reason: Reason) {
            self.path = path
            self.reason = reason
        }

        public var description: String {
            switch reason {
            case .commandLine: return "\(path) (from --config)"
            case .environment: return "\(path) (from $\(ConfigLocator.environmentVariable))"
            case .workingDirectory: return "\(path) (found in the current directory)"
            case .system: return "\(path) (the system default)"
            }
        }
    }

    /// Picks the config file.
    ///
    /// - Parameters:
    ///   - explicitPath: `--config`'s value, if given; relative to `currentDirectory`.
    ///   - environment: the process environment (`$JOBD_CONFIG` is read; an
    ///     empty value counts as unset).
    ///   - currentDirectory: an absolute path.
    ///   - fileExists: the test for a regular, readable file; injectable for tests.
    public static func locate(
        explicitPath: String?,
        environment: [String: String],
        currentDirectory: String,
        fileExists: (String) -> Bool = ConfigLocator.isRegularFile
    ) throws(ConfigLocatorError) -> Location {
        if let explicitPath {
            guard !explicitPath.isEmpty else {
                throw ConfigLocatorError(
                    code: .explicitPathMissing, path: nil,
                    message: "--config is empty; give the path of jobd.yaml")
            }
            let path = ConfigPaths.resolve(explicitPath, against: currentDirectory)
            guard fileExists(path) else {
                throw ConfigLocatorError(
                    code: .explicitPathMissing, path: path,
                    message: "the config file \(path) given with --config \(whatIsWrong(path))")
            }
            return Location(path: path, reason: .commandLine)
        }
        if let fromEnvironment = environment[environmentVariable], !fromEnvironment.isEmpty {
            let path = ConfigPaths.resolve(fromEnvironment, against: currentDirectory)
            guard fileExists(path) else {
                throw ConfigLocatorError(
                    code: .environmentPathMissing, path: path,
                    message:
                        "the config file \(path) named by $\(environmentVariable) \(whatIsWrong(path)); fix or unset $\(environmentVariable)"
                )
            }
            return Location(path: path, reason: .environment)
        }
        let local = ConfigPaths.resolve(workingDirectoryCandidate, against: currentDirectory)
        if fileExists(local) { return Location(path: local, reason: .workingDirectory) }
        if fileExists(systemPath) { return Location(path: systemPath, reason: .system) }
        throw ConfigLocatorError(
            code: .notFound, path: nil,
            message:
                "no config file found: tried \(local) and \(systemPath); pass --config PATH or set $\(environmentVariable)"
        )
    }

    /// Whether `path` names an existing regular file (or a symlink to one).
    public static func isRegularFile(_ path: String) -> Bool {
        ConfigFile.kind(of: path) == .regularFile
    }

    /// Why `path` is not a config file to read: "does not exist", "is a folder, not a file", …
    static func whatIsWrong(_ path: String) -> String {
        ConfigFile.problem(with: ConfigFile.kind(of: path)) ?? "cannot be read"
    }
}

/// Why no config file could be chosen.
public struct ConfigLocatorError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// `--config` names a file that does not exist.
        public static let explicitPathMissing = Code("explicit-path-missing")
        /// `$JOBD_CONFIG` names a file that does not exist.
        public static let environmentPathMissing = Code("environment-path-missing")
        /// Neither default location holds a file.
        public static let notFound = Code("not-found")
    }

    public var code: Code
    /// The path that was expected to exist, if one was named.
    public var path: String?
    public var message: String

    public var description: String { message }
}
