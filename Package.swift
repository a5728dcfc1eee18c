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
    ],
    targets: [
        // A thread-local pointer (Swift has no thread-local variables).
        .target(name: "CPromisesSupport"),
        .target(name: "Promises", dependencies: ["CPromisesSupport"], swiftSettings: strict),
        // `Mutex.withAnnouncedLock`: a lock ThreadSanitizer can see, for the daemon's modules.
        .target(name: "Locking", dependencies: ["CPromisesSupport"], swiftSettings: strict),
        .target(name: "PromiseKit", dependencies: ["Promises"], swiftSettings: strict),
        .testTarget(name: "PromisesTests", dependencies: ["Promises"], swiftSettings: strict),
        // PromiseKit 8 client code as it is written — `import PromiseKit`, no
        // upcoming features — compiled twice: in Swift 5 language mode, and in
        // Swift 6 mode by a second target whose folder is a symbolic link to
        // the first (a target's files cannot be listed by another target).
        .testTarget(name: "PromisesCompatTests", dependencies: ["PromiseKit"], swiftSettings: [.swiftLanguageMode(.v5)]),
        .testTarget(name: "PromisesCompatSwift6Tests", dependencies: ["PromiseKit"], swiftSettings: [.swiftLanguageMode(.v6)]),
        .target(name: "CBenchSupport"),
        .executableTarget(name: "promises-bench", dependencies: ["Promises", "CBenchSupport"], swiftSettings: strict),
        .target(name: "CProcessSupport"),
        .target(
            name: "JobEngine",
            dependencies: [.product(name: "Yams", package: "Yams"), "CProcessSupport", "Promises", "JobStore", "Locking"],
            swiftSettings: strict
        ),
        .executableTarget(name: "process-bench", dependencies: ["JobEngine", "CBenchSupport"], swiftSettings: strict),
        .executableTarget(
            name: "engine-bench",
            dependencies: [
                "JobEngine", "JobStore", "Promises", "CBenchSupport",
                // sqlite3_memory_used(): to tell SQLite's page caches from the engine's own memory.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ], swiftSettings: strict),
        // A child process running an engine, for the crash-resume tests (killed with SIGKILL).
        .executableTarget(name: "engine-test-worker", dependencies: ["JobEngine", "JobStore"], swiftSettings: strict),
        .testTarget(
            name: "JobEngineTests", dependencies: ["JobEngine", "JobStore", "Promises", "engine-test-worker"],
            swiftSettings: strict),
        .target(
            name: "JobStore",
            dependencies: [
                "Locking",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for the hot paths (see Sources/JobStore/RawStatement.swift).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(name: "jobstore-bench", dependencies: ["JobStore"], swiftSettings: strict),
        .testTarget(name: "JobStoreTests", dependencies: ["JobStore"], swiftSettings: strict),
    
        // The daemon: its parts in a library (testable), a thin executable.
        .target(
            name: "JobDaemon",
            dependencies: [
                "JobEngine", "JobStore", "Promises", "Locking",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict),
        .executableTarget(name: "jobd", dependencies: ["JobDaemon"], swiftSettings: strict),
        // Submit-to-start latency and an idle jobd's CPU and memory (runs the jobd binary).
        .executableTarget(name: "jobd-bench", dependencies: ["JobEngine", "JobStore"], swiftSettings: strict),
        .testTarget(
            name: "JobDaemonTests", dependencies: ["JobDaemon", "JobEngine", "JobStore", "jobd"],
            swiftSettings: strict),
        // The control CLI.
        .executableTarget(
            name: "jobctl",
            dependencies: [
                "JobEngine", "JobStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strict),
        .testTarget(name: "JobctlTests", dependencies: ["JobEngine", "JobStore", "jobctl"], swiftSettings: strict),
    ]
)
