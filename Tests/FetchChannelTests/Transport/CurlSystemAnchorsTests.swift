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

        /// Debian's libcurl names /etc/ssl/certs/ca-certificates.crt, which the ca-certificates
        /// package writes: where that file exists, requests use it alone.
        @Test func libcurlsOwnBundleIsUsedWhereItIsAFile() {
            let debianBundle = "/etc/ssl/certs/ca-certificates.crt"
            let expected = CurlSystemAnchors.usableBundle(debianBundle)
            #expect(
                CurlSystemAnchors.bundle == expected,
                "libcurl's CURLINFO_CAINFO: \(String(describing: CurlSystemAnchors.bundle))")
        }
    }
#endif
