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
        .library(name: "JobStore", targets: ["JobStore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        .target(name: "Promises", swiftSettings: strict),
        .testTarget(name: "PromisesTests", dependencies: ["Promises"], swiftSettings: strict),
        .target(
            name: "JobStore",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API, for the hot paths (see Sources/JobStore/RawStatement.swift).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(name: "jobstore-bench", dependencies: ["JobStore"], swiftSettings: strict),
        .testTarget(name: "JobStoreTests", dependencies: ["JobStore"], swiftSettings: strict),
    ]
)
