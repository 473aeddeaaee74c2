#if os(Linux)
    import FetchChannelTestSupport
    import Foundation
    import Testing

    @testable import FetchChannel

    /// A request trusting the system CAs names libcurl's bundle alone, so that libcurl keeps the
    /// parsed store between connections; only when that bundle is a file that can be read so.
    @Suite struct CurlSystemAnchorsTests {
        @Test func aRegularFileIsTheBundle() throws {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("system-anchors-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("bundle.pem")
            try Data("-----BEGIN CERTIFICATE-----\n".utf8).write(to: file)
            let link = directory.appendingPathComponent("link.pem")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file)

            #expect(CurlSystemAnchors.usableBundle(file.path) == file.path)
            #expect(CurlSystemAnchors.usableBundle(link.path) == link.path, "a link to a file is followed")
            #expect(CurlSystemAnchors.usableBundle(directory.path) == nil, "a directory is no bundle")
            #expect(CurlSystemAnchors.usableBundle(directory.appendingPathComponent("none.pem").path) == nil)
            #expect(CurlSystemAnchors.usableBundle("") == nil)
        }

        /// libcurl's bundle, as its build names it (`curl-config --ca`, from the same -dev
        /// package the transport builds against): where that file exists, requests use it alone.
        @Test(
            .dedicatedThread,
            .enabled(if: ExternalTool.onPath("curl-config") != nil, "curl-config is not on PATH: skipped"))
        func libcurlsOwnBundleIsUsedWhereItIsAFile() throws {
            let tool = try #require(ExternalTool.onPath("curl-config"))
            let result = try ExternalTool.run(tool, ["--ca"])
            try #require(result.status == 0, "\(result.summary)")
            let named = result.output.trimmingCharacters(in: .whitespacesAndNewlines)
            let expected = CurlSystemAnchors.usableBundle(named)
            #expect(
                CurlSystemAnchors.bundle == expected,
                "curl-config --ca: \(named); CURLINFO_CAINFO: \(String(describing: CurlSystemAnchors.bundle))")
        }
    }
#endif
