/// Everything jobd runs from: the located jobd.yaml and the definitions it
/// points at. What `jobd --check`, `jobctl validate` and a SIGHUP reload
/// load in one call.
public struct Configuration: Sendable {
    public var location: ConfigLocator.Location
    public var daemon: DaemonConfig
    public var definitions: DefinitionSet

    public init(location: ConfigLocator.Location, daemon: DaemonConfig, definitions: DefinitionSet) {
        self.location = location
        self.daemon = daemon
        self.definitions = definitions
    }

    /// Loads the config file at `location`, then its definitions folder
    /// checked against its queues and pools. The diagnostics hold every
    /// problem of both (the config's first); `value` is nil if any is an
    /// error. When the config itself has errors, definitions are still
    /// checked against its default queue and pool names, so one run shows
    /// as much as it can.
    public static func load(at location: ConfigLocator.Location) -> LoadResult<Configuration> {
        let daemonResult = DaemonConfig.load(path: location.path)
        let daemon = daemonResult.value
        let folder = daemon?.definitions
            ?? DaemonConfig.defaults(relativeTo: ConfigPaths.folder(of: location.path)).definitions
        let loader = DefinitionLoader(context: daemon?.definitionContext ?? .defaults)
        let definitions = daemonResult.diagnostics.contains { $0.code == .unreadableFile || $0.code == .yamlSyntax }
            ? DefinitionSet(definitions: [], diagnostics: [])
            : loader.loadFolder(folder)
        let diagnostics = daemonResult.diagnostics + definitions.diagnostics
        guard let daemon, !diagnostics.containsErrors else {
            return LoadResult(value: nil, diagnostics: diagnostics)
        }
        return LoadResult(value: Configuration(location: location, daemon: daemon, definitions: definitions),
                          diagnostics: diagnostics)
    }
}
