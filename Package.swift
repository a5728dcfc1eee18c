// swift-tools-version:6.0
import PackageDescription

// Upcoming features every target of ours builds with (Swift 5 compatibility
// tests excepted: they must look like PromiseKit client code).
//  - ExistentialAny: https://github.com/swiftlang/swift-evolution/blob/main/proposals/0335-existential-any.md
//  - MemberImportVisibility: https://github.com/swiftlang/swift-evolution/blob/main/proposals/0444-member-import-visibility.md
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "jobd",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Promises", targets: ["Promises"]),
        // `Promises` under PromiseKit's module name: `import PromiseKit` code compiles unchanged.
        .library(name: "PromiseKit", targets: ["PromiseKit"]),
        .executable(name: "jobd", targets: ["jobd"]),
        .executable(name: "jobctl", targets: ["jobctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/jpsim/Yams", exact: "6.2.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        // Metrics and the web dashboard (docs/dashboard.md).
        .package(url: "https://github.com/apple/swift-metrics", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/apple/swift-nio", exact: "2.101.3"),
        // The PostgreSQL store: its client and TLS.
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", exact: "2.37.6"),
        // The dashboard's password hashes (PBKDF2); postgres-nio links it already.
        .package(url: "https://github.com/apple/swift-crypto", exact: "4.5.2"),
    ],
    targets: [
        // MARK: The promise core

        // A thread-local pointer (Swift has no thread-local variables).
        .target(name: "CPromisesSupport"),
        .target(name: "Promises", dependencies: ["CPromisesSupport", "Locking"], swiftSettings: strict),
        // The one lock module: `Mutex` critical sections announced to ThreadSanitizer
        // (its hooks are looked up in C, once).
        .target(name: "CLocking"),
        .target(name: "Locking", dependencies: ["CLocking"], swiftSettings: strict),
        .testTarget(name: "LockingTests", dependencies: ["CLocking"], swiftSettings: strict),
        // `Promises` under PromiseKit's module name (Sources/PromiseKit re-exports it).
        .target(name: "PromiseKit", dependencies: ["Promises"], swiftSettings: strict),
        .testTarget(name: "PromisesTests", dependencies: ["Promises"], swiftSettings: strict),
        // PromiseKit 8 client code as it is written — `import PromiseKit`, no
        // upcoming features — compiled twice: in Swift 5 language mode, and in
        // Swift 6 mode by a second target whose folder is a symbolic link to
        // the first (a target's files cannot be listed by another target).
        .testTarget(
            name: "PromisesCompatTests", dependencies: ["PromiseKit"], swiftSettings: [.swiftLanguageMode(.v5)]),
        .testTarget(
            name: "PromisesCompatSwift6Tests", dependencies: ["PromiseKit"], swiftSettings: [.swiftLanguageMode(.v6)]),

        // MARK: jobd's modules, one concern each

        // Child processes for the tests and the benchmarks: posix_spawn and waitpid, not
        // Foundation's Process, whose run() crashes now and then in Swift 6.3.1
        // (swift-corelibs-foundation #5472). CSpawn: the glibc calls Swift's Glibc hides.
        .target(name: "CSpawn", path: "Tests/CSpawn"),
        .target(name: "Spawn", dependencies: ["CSpawn"], path: "Tests/Spawn", swiftSettings: strict),
        .testTarget(name: "SpawnTests", dependencies: ["Spawn"], swiftSettings: strict),
        // Scratch folders and the repository's path, child processes, raw HTTP, and the
        // outside tools the tests compare against (prometheus_client, Prometheus, Chromium).
        // Test doubles of an engine's store that forward what they do not change.
        .target(name: "StoreDoubles", dependencies: ["JobStore"], path: "Tests/StoreDoubles", swiftSettings: strict),
        .target(
            name: "TestSupport", dependencies: ["Spawn", .product(name: "Logging", package: "swift-log")],
            path: "Tests/TestSupport", swiftSettings: strict),

        // Where jobs and stage results live. The contract: the capability protocols, the value
        // types and the checks both stores share; no database library.
        .target(name: "JobStore", dependencies: ["Locking", "JobValues"], swiftSettings: strict),
        // The SQLite store (one host).
        .target(
            name: "JobStoreSQLite",
            dependencies: [
                "JobStore", "JobValues", "Locking",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for the hot paths (see Sources/JobStoreSQLite/RawStatement.swift).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: strict),
        // The PostgreSQL store (several hosts sharing one queue).
        .target(
            name: "JobStorePostgres",
            dependencies: [
                "JobStore", "JobValues", "Locking",
                // The client, its timeouts (NIOCore), connection errors (NIOPosix) and TLS (NIOSSL).
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        // A job database by its location: the one function that opens either store, and
        // the copy of a SQLite database into PostgreSQL (`jobctl copy-database`).
        .target(
            name: "JobDatabase",
            dependencies: [
                "JobStore", "JobStoreSQLite", "JobStorePostgres", "JobValues",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "JobStoreTests",
            dependencies: [
                "JobStore", "JobStoreSQLite", "JobStorePostgres", "JobDatabase", "JobValues", "Locking", "Spawn",
                "TestSupport",
                // SQLite's C API, to make SQLite refuse a bind (HostileLimitTests).
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: strict),
        // Durations and sizes as jobd writes them (`1m30s`, `64KiB`), with their bounds.
        .target(name: "JobValues", swiftSettings: strict),
        // Calendar math of schedules: cron, systemd calendar events, fixed intervals.
        .target(name: "JobCalendar", dependencies: ["JobValues"], swiftSettings: strict),
        .testTarget(
            name: "JobCalendarTests", dependencies: ["JobCalendar", "Spawn", "TestSupport"], swiftSettings: strict),
        // jobd.yaml, job definitions, YAML, durations and sizes, transforms, diagnostics.
        .target(
            name: "JobConfig",
            dependencies: ["JobValues", "JobCalendar", .product(name: "Yams", package: "Yams")],
            swiftSettings: strict),
        // Where definitions meet the store contract: the job a definition submits, each
        // schedule's status read from the store.
        .target(
            name: "JobConfigStore", dependencies: ["JobConfig", "JobStore", "JobCalendar", "JobValues"],
            swiftSettings: strict),
        .testTarget(
            name: "JobConfigTests", dependencies: ["JobConfig", "JobValues", "JobCalendar", "TestSupport"],
            swiftSettings: strict),
        // The control socket's protocol: messages and one codec for both ends.
        .target(name: "JobControl", dependencies: ["JobValues"], swiftSettings: strict),
        // Child processes: epoll, pidfd, process groups.
        .target(name: "CProcessSupport"),
        .target(
            name: "JobProcesses", dependencies: ["CProcessSupport", "JobValues", "Locking"], swiftSettings: strict),
        .testTarget(name: "JobProcessesTests", dependencies: ["JobProcesses", "TestSupport"], swiftSettings: strict),
        // Definitions as promise chains: persistence, retries, timeouts, cancel, resume, the finalizer.
        .target(
            name: "JobEngine",
            dependencies: [
                "Promises", "JobStore", "JobConfig", "JobConfigStore", "JobValues", "JobCalendar", "JobProcesses",
                "JobMetrics", "Locking",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // A child process running an engine, for the crash-resume tests (killed with SIGKILL).
        .executableTarget(
            name: "engine-test-worker",
            dependencies: [
                "JobEngine", "JobConfig", "JobProcesses", "JobStore", "JobStoreSQLite", "Promises", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/engine-test-worker", swiftSettings: strict),
        .testTarget(
            name: "JobEngineTests",
            dependencies: [
                "JobEngine", "JobConfig", "JobConfigStore", "JobValues", "JobProcesses", "JobStore", "JobStoreSQLite",
                "JobStorePostgres", "JobDatabase", "JobMetrics", "Promises", "engine-test-worker", "Spawn",
                "StoreDoubles", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // The daemon: its parts in a library (testable), a thin executable.
        .target(
            name: "JobDaemon",
            dependencies: [
                "JobEngine", "JobConfig", "JobConfigStore", "JobValues", "JobControl", "JobProcesses", "JobStore",
                "JobStoreSQLite", "JobStorePostgres", "JobDatabase", "Promises", "Locking", "JobMetrics",
                "JobDashboard",
                "JobHTTP",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict),
        .executableTarget(name: "jobd", dependencies: ["JobDaemon"], swiftSettings: strict),
        .testTarget(
            name: "JobDaemonTests",
            dependencies: [
                "JobDaemon", "JobCalendar", "JobConfig", "JobConfigStore", "JobControl", "JobMetrics", "JobStore",
                "JobStoreSQLite", "JobStorePostgres", "JobDatabase", "JobValues", "Spawn", "TestSupport", "jobd",
                // `jobctl metrics` and `jobctl validate` against the real jobd (MetricsTests).
                "jobctl",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        // The control CLI: reads the config, talks to the database and to jobd's socket.
        .executableTarget(
            name: "jobctl",
            dependencies: [
                "JobConfig", "JobConfigStore", "JobValues", "JobControl", "JobStore", "JobDatabase", "JobStoreSQLite",
                "JobStorePostgres", "JobCalendar",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict),
        // jobctl's tests run an engine in the test process as a stand-in for jobd.
        .testTarget(
            name: "JobctlTests",
            dependencies: [
                "JobConfig", "JobConfigStore", "JobValues", "JobControl", "JobStore", "JobStoreSQLite", "JobDatabase",
                "JobEngine", "JobProcesses", "Spawn", "StoreDoubles", "jobctl",
            ],
            swiftSettings: strict),

        // Metrics: the metric families and a one-line call per event for the engine,
        // over swift-metrics, with a Prometheus registry behind it. No HTTP here.
        .target(
            name: "JobMetrics",
            dependencies: [
                "JobValues",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict),
        .testTarget(name: "JobMetricsTests", dependencies: ["JobMetrics", "TestSupport"], swiftSettings: strict),
        // The dashboard's pages as HTML text, read from a data source (a store, a snapshot).
        .target(name: "JobDashboard", dependencies: ["JobStore", "JobValues", "JobCalendar"], swiftSettings: strict),
        .testTarget(
            name: "JobDashboardTests", dependencies: ["JobDashboard", "JobStore", "JobStoreSQLite"],
            swiftSettings: strict),
        // The HTTP listener: /metrics and the dashboard, as a Service.
        .target(
            name: "JobHTTP",
            dependencies: [
                "JobDashboard", "JobValues",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict),
        .testTarget(
            name: "JobHTTPTests",
            dependencies: [
                "JobHTTP", "JobConfig", "JobDashboard", "JobMetrics", "JobStore", "JobStoreSQLite", "JobValues",
                "Spawn",
                "TestSupport",
                // HTTPRequest, for the access rules' unit tests (AccessTests).
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),

        // Package.swift held to docs/architecture.md's module tables.
        .testTarget(name: "ArchitectureTests", dependencies: ["TestSupport"], swiftSettings: strict),

        // MARK: Benchmarks: each prints its figures beside its targets and exits 1 when one misses (make bench)

        .target(name: "CBenchSupport", path: "Benchmarks/CBenchSupport"),
        // The report (figures beside targets, the exit status), arguments, timing and the baselines.
        .target(
            name: "BenchmarkSupport", dependencies: ["CBenchSupport", "JobValues"], path: "Benchmarks/BenchmarkSupport",
            swiftSettings: strict),
        // The store driven as the engine drives it: jobstore-bench's claim cycles, engine-bench's baseline.
        .target(
            name: "StoreCycle", dependencies: ["BenchmarkSupport", "JobStore", "JobStoreSQLite"],
            path: "Benchmarks/StoreCycle",
            swiftSettings: strict),
        .executableTarget(
            name: "promises-bench", dependencies: ["Promises", "BenchmarkSupport"],
            path: "Benchmarks/promises-bench", swiftSettings: strict),
        .executableTarget(
            name: "jobstore-bench", dependencies: ["JobStore", "JobStoreSQLite", "BenchmarkSupport", "StoreCycle"],
            path: "Benchmarks/jobstore-bench", swiftSettings: strict),
        .executableTarget(
            name: "process-bench", dependencies: ["JobProcesses", "BenchmarkSupport"],
            path: "Benchmarks/process-bench", swiftSettings: strict),
        .executableTarget(
            name: "engine-bench",
            dependencies: [
                "JobEngine", "JobConfig", "JobConfigStore", "JobProcesses", "JobStore", "JobStoreSQLite",
                "BenchmarkSupport",
                "StoreCycle",
                .product(name: "Logging", package: "swift-log"),
                // sqlite3_memory_used(): to tell SQLite's page caches from the engine's own memory.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            path: "Benchmarks/engine-bench", swiftSettings: strict),
        // Two jobds on PostgreSQL against a plain pgbench loop, and submit-to-start latency
        // across hosts (Benchmarks/postgres-bench/run starts a throwaway server; runs the jobd binary).
        .executableTarget(
            name: "postgres-bench",
            dependencies: [
                "JobStore", "JobStoreSQLite", "JobStorePostgres", "JobControl", "JobValues", "BenchmarkSupport",
                "Spawn",
            ],
            path: "Benchmarks/postgres-bench", exclude: ["run"], swiftSettings: strict),
        // Submit-to-start latency and an idle jobd's CPU and memory (runs the jobd binary).
        .executableTarget(
            name: "jobd-bench",
            dependencies: [
                "JobConfig", "JobConfigStore", "JobControl", "JobStore", "JobStoreSQLite", "BenchmarkSupport", "Spawn",
            ],
            path: "Benchmarks/jobd-bench", swiftSettings: strict),
    ]
)
