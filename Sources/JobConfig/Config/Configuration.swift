import JobCalendar

/// Everything jobd runs from: the located jobd.yaml and the definitions it
/// points at. What `jobd --check`, `jobctl validate` and a SIGHUP reload
/// load in one call.
public struct Configuration: Sendable {
    public var location: ConfigLocator.Location
    public var daemon: DaemonConfiguration
    public var definitions: DefinitionSet

    public init(location: ConfigLocator.Location, daemon: DaemonConfiguration, definitions: DefinitionSet) {
        self.location = location
        self.daemon = daemon
        self.definitions = definitions
    }

    /// Loads the config file at `location`, then its definitions folder
    /// checked against its queues and pools. The diagnostics hold every
    /// problem of both (the config's first); `value` is nil if any is an
    /// error. When the config itself has errors, definitions are still
    /// checked — in the folder and against the queue and pool names the
    /// config gives as far as it could be read — so one run shows as much as
    /// it can; a definitions folder that is missing is then not reported, as
    /// the broken config may be what names it wrongly.
    public static func load(at location: ConfigLocator.Location) -> LoadResult<Configuration> {
        let (daemon, configDiagnostics) = DaemonConfiguration.read(path: location.path)
        guard let daemon else { return LoadResult(value: nil, diagnostics: configDiagnostics) }
        var definitions = DefinitionLoader(config: daemon).loadFolder(daemon.definitions)
        if configDiagnostics.containsErrors {
            definitions.diagnostics.removeAll { $0.code == .missingFolder }
        }
        if let problem = hostZoneProblem(definitions.definitions, host: HostTimeZone.current) {
            definitions.diagnostics = (definitions.diagnostics + [problem]).sortedByPosition()
        }
        let diagnostics = configDiagnostics + definitions.diagnostics
        guard !diagnostics.containsErrors else { return LoadResult(value: nil, diagnostics: diagnostics) }
        return LoadResult(
            value: Configuration(location: location, daemon: daemon, definitions: definitions),
            diagnostics: diagnostics)
    }

    /// A warning when `host` has a problem (an unusable `$TZ`) and some
    /// schedule reads the host's zone: at the first such schedule.
    static func hostZoneProblem(_ definitions: [JobDefinition], host: HostTimeZone) -> Diagnostic? {
        guard let problem = host.problem else { return nil }
        let affected = definitions.flatMap { $0.schedules.filter(\.readsHostZone) }
        guard let first = affected.map(\.sourcePosition).min() else { return nil }
        return Diagnostic(
            .warning, code: .unusableTZ, at: first, "\(problem) (\(affected.count) schedule(s) have none)")
    }
}
