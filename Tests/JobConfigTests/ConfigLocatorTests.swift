import JobConfig
import TestSupport
import Testing

@Suite struct ConfigLocatorTests {
    /// A fake file system holding exactly these files.
    func files(_ paths: String...) -> (String) -> Bool {
        let set = Set(paths)
        return { set.contains($0) }
    }

    let everywhere = ["/work/explicit.yaml", "/env/jobd.yaml", "/srv/app/config/jobd.yaml", "/etc/jobd/jobd.yaml"]

    @Test func commandLineWinsOverEverything() throws {
        let location = try ConfigLocator.locate(
            explicitPath: "explicit.yaml", environment: ["JOBD_CONFIG": "/env/jobd.yaml"],
            currentDirectory: "/work", fileExists: { everywhere.contains($0) })
        #expect(location == .init(path: "/work/explicit.yaml", reason: .commandLine))
        #expect(location.description.contains("--config"))
    }

    @Test func environmentComesSecond() throws {
        let location = try ConfigLocator.locate(
            explicitPath: nil, environment: ["JOBD_CONFIG": "/env/jobd.yaml"],
            currentDirectory: "/srv/app", fileExists: { everywhere.contains($0) })
        #expect(location == .init(path: "/env/jobd.yaml", reason: .environment))
    }

    @Test func workingDirectoryComesThird() throws {
        let location = try ConfigLocator.locate(
            explicitPath: nil, environment: ["JOBD_CONFIG": ""],
            currentDirectory: "/srv/app", fileExists: { everywhere.contains($0) })
        #expect(location == .init(path: "/srv/app/config/jobd.yaml", reason: .workingDirectory))
    }

    @Test func systemPathComesLast() throws {
        let location = try ConfigLocator.locate(
            explicitPath: nil, environment: [:], currentDirectory: "/elsewhere",
            fileExists: files("/etc/jobd/jobd.yaml"))
        #expect(location == .init(path: "/etc/jobd/jobd.yaml", reason: .system))
    }

    @Test func relativePathsResolveAgainstTheCurrentDirectory() throws {
        let location = try ConfigLocator.locate(
            explicitPath: nil, environment: ["JOBD_CONFIG": "../other/./jobd.yaml"],
            currentDirectory: "/srv/app", fileExists: files("/srv/other/jobd.yaml"))
        #expect(location.path == "/srv/other/jobd.yaml")
    }

    @Test func aMissingExplicitFileIsAnErrorNotAFallThrough() {
        #expect {
            try ConfigLocator.locate(
                explicitPath: "/nope.yaml", environment: [:], currentDirectory: "/srv/app",
                fileExists: { everywhere.contains($0) })
        } throws: { error in
            guard let error = error as? ConfigLocatorError else { return false }
            return error.code == .explicitPathMissing && error.path == "/nope.yaml"
                && error.message.contains("/nope.yaml")
        }
    }

    @Test func aMissingEnvironmentFileIsAnErrorNotAFallThrough() {
        #expect {
            try ConfigLocator.locate(
                explicitPath: nil, environment: ["JOBD_CONFIG": "/gone.yaml"],
                currentDirectory: "/srv/app", fileExists: { everywhere.contains($0) })
        } throws: { error in
            guard let error = error as? ConfigLocatorError else { return false }
            return error.code == .environmentPathMissing && error.message.contains("JOBD_CONFIG")
        }
    }

    @Test func nothingFoundListsWhatWasTried() {
        #expect {
            try ConfigLocator.locate(
                explicitPath: nil, environment: [:], currentDirectory: "/srv/app",
                fileExists: files())
        } throws: { error in
            guard let error = error as? ConfigLocatorError else { return false }
            return error.code == .notFound && error.message.contains("/srv/app/config/jobd.yaml")
                && error.message.contains("/etc/jobd/jobd.yaml") && error.message.contains("--config")
        }
    }

    @Test func realFileSystemCheckRejectsFolders() throws {
        let folder = try makeTemporaryFolder()
        #expect(!ConfigLocator.isRegularFile(folder))
        try write("log: { level: debug }\n", to: folder + "/jobd.yaml")
        #expect(ConfigLocator.isRegularFile(folder + "/jobd.yaml"))
    }
}

@Suite struct ConfigPathsTests {
    @Test(arguments: [
        ("../var/jobd.sqlite", "/repo/config", "/repo/var/jobd.sqlite"),
        ("jobs.d", "/repo/config", "/repo/config/jobs.d"),
        ("./jobs.d/", "/repo/config", "/repo/config/jobs.d"),
        ("/var/lib/jobd/db", "/repo/config", "/var/lib/jobd/db"),
        ("../../../../x", "/a/b", "/x"),
        ("a//b/../c", "/r", "/r/a/c"),
    ])
    func resolvesAgainstAFolder(path: String, folder: String, expected: String) {
        #expect(ConfigPaths.resolve(path, against: folder) == expected)
    }

    @Test func folderOfAPath() {
        #expect(ConfigPaths.folder(of: "/etc/jobd/jobd.yaml") == "/etc/jobd")
        #expect(ConfigPaths.folder(of: "/jobd.yaml") == "/")
    }
}
