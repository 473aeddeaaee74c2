import Foundation
import Testing

@testable import DeviceSigning

/// Shared helpers and fixtures of the key store tests.
enum KeyStoreFixtures {
    /// A cheap but valid cost (about 5 ms) for tests that are not about the cost.
    static let cheapKDF = KeyDerivation.scrypt(n: 1024, r: 8, p: 1)

    /// The passphrase of the encrypted fixtures below.
    static let fixturePassphrase = "fixture-pass"

    // Test-only keys made with OpenSSL 3.0 `openssl genpkey` (encrypted ones with
    // `-aes-256-cbc -pass file:PASS`: PBES2, PBKDF2-HMAC-SHA256, 2048 iterations). Never use them
    // for anything else.
    static let p384Encrypted = """
        -----BEGIN ENCRYPTED PRIVATE KEY-----
        MIIBHDBXBgkqhkiG9w0BBQ0wSjApBgkqhkiG9w0BBQwwHAQIdOjreerGSW4CAggA
        MAwGCCqGSIb3DQIJBQAwHQYJYIZIAWUDBAEqBBDWJcnIGLN7hMN+/UVIRYp9BIHA
        i+kx/vZY355e12S2nVYQ6hfbQrVX6sDnc4Wrmtu740kmiDA3mIzzWyWjME6WcDGU
        GnqsioEssJVZoGKAG8josLSw9QdF83Tv4XQU66pzZ0GSiA6uwgH1ic8NuKM2CgPl
        58lUjGpgh2kEiIky13A8LGAgpUGn7yqdxB9rEzwUeN1INuF1Fp5jrkM+xEOo1EO9
        2L893XjhrcmekKDr6vp5+/38Eydbohymdo1SAO4bGlqv/Vv8moxdhluyB1E20KqF
        -----END ENCRYPTED PRIVATE KEY-----
        """
    static let p384Plain = """
        -----BEGIN PRIVATE KEY-----
        MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDBOSkEIAJA+w/ujUfCi
        x9b6WcbF72TQoUtJNkY4t1b/xy/C07MghzQVR04Nh1VRQ6yhZANiAAQ06fmp8dPL
        m9Q90sOUpTdY+V62+Hlm6tv7MurUJlEYMGGgrHF7eGJXMkO8cNDTA3rkNaeg2Pog
        gVnVtHDRd0kcChyEqopLKdUWUegD8oRn5FdiX2qYRs7P9Yb5bL3yMkY=
        -----END PRIVATE KEY-----
        """
    static let rsaEncrypted = """
        -----BEGIN ENCRYPTED PRIVATE KEY-----
        MIIC3TBXBgkqhkiG9w0BBQ0wSjApBgkqhkiG9w0BBQwwHAQIDBlvWQZPST0CAggA
        MAwGCCqGSIb3DQIJBQAwHQYJYIZIAWUDBAEqBBBlFeZe4CrX6AtG1OautKQkBIIC
        gHkZKcvIvhDMGmoj1heDnnn3V2wWKBrtD2EK05z4jC2Hi67QZ0MvKjuaNHQSJ4qo
        87BmaprmEApLo6p/akWL2ccMYxJg2HFJRbZdW/Jfaqr+E+r0Lxpi/NiMJJjWuC+r
        tYChHGyaSFMRw6NyQWHDE6ziG1xVr4C7Z8tWgr5K+pEFK94X1r0KT0775U4/EWMG
        0tki3GWTh7jAZeK3SmpCn42C8aLmS0eGiUow8RZNynCL0CnpreZabFggEOl09NIZ
        ZPas6cIsUv5TB42lQcaYqZMRKx8GZL83lenJSmbEQ000tiVYYQ5TcElwAk368jYE
        BzG8G267RiFYXqISLNf7+G+3sUiSg+PBG58HGCjFUrWNEijBBf3n75ndwtFE6wE9
        apU4sLaCm/QIgMWzyZSRgOhGEXPZbNNVryU6Vi5g6QJ+QwRD3xaivnryx2ZA64LG
        M7zNmV4V/m+WQQyR+UTke7cSz80yVeCsc/BhHe0027dGnk0YgNj96tEjQTeAgpw8
        VKohrItm9sQmngBF9IP165SRZeFKZYUhWQ6Jp9OR8CIJ6nI7Y1XG4MF/EUZQipjM
        5wm0ey++jv9aWLH0r5R7oNtF/enyoKnPS22McntOsRScBD4XZGoDbQy88OTC/ktk
        R6rNWLQiUcCnWIu7qm28DTRJ6RGajGSEPfvh50zTNtg5jqlO5vZcWx/AH4DMxgXr
        ZyjEpUh/zfoPQvlcPWfDBYlBZeBWBGAFtvm9VZCk9TONL/uJSFk8T0rqDf/fkSbv
        ooblsXFYy9QLCPkd9I8YJrqxsKy3cipYJ06MGHqLXul9ZO2md8N/AXlh9Mad/6XR
        OJCBCgKlJ8k9f0S+667HUxw=
        -----END ENCRYPTED PRIVATE KEY-----
        """
    static let rsaPlain = """
        -----BEGIN PRIVATE KEY-----
        MIICeAIBADANBgkqhkiG9w0BAQEFAASCAmIwggJeAgEAAoGBAJsW9kbOlkfpslQe
        yEETRVBjyxHx6iDRq9FeFqIJkrLWpL9wrZNtK1H6wbMEIdY1VN71ZJGfPAvrjhII
        kBf+1LrR/F0zbzWR4v+gXm4GvAT+spxtQy9QQbp0NdXlkHaDAYjQLIn41bahHkgk
        FLmGmdEjbsnppyBSUcYYendqW4zbAgMBAAECgYEAjjHna9ROBXFHh8kRYlkA3Ewj
        DDj5qU2Uc0oJBlgwoLgcJUpyWxFk/q0im7fWLkiHoETuCHYu398BS5d+RgHnmFUV
        MwAjKUsYNZp/l6T7XI0FUIAry4ywJDeVMJsSJlcLDouXpAd0NOyfzg+/WlE7JqBe
        iq46+7r3kpd56R/5JQECQQDNJ+WQVDwZiJPNUeLCC8jzqREu9bvLICVhzraROle4
        oc/fICoweRJnhdtvYV4hgy+i5NGpZRWFka6ta90QHlQLAkEAwYae4N9J2Jkhrn1R
        EYzzpgGc8X6VZZae45mzhdBNlPWY3/r1jHn39tcO8cn6xB+hJXI8FzKPW9FzRuAc
        Vp3ccQJBAMk29ktGsuOANybLx5H2qROCoN3kGloxnzh83Ec4Z80ot47qJzb/qHNs
        sDpfz0kjN9eWgaSZBjDJH//rqRgkBt0CQQC3NtjhceN6sPbHOBLw962Pw0UvCDUu
        GRvRxCjGjb91P9J8ch3X4XzU7yNR23OSC5PHXM/w8kfwmGl3dyK9CfSxAkBf3J/h
        pjfyVAIhZLWXQroK/hqt9bm6exvXPnzlgcEFDqFMyH+UJSe9cFuxuB7xkT+w3Hpz
        Gx5dtEPAp6gagpx0
        -----END PRIVATE KEY-----
        """
}

func secret(_ text: String) -> SecureBytes { SecureBytes(Array(text.utf8)) }

/// Runs `body` and expects a DeviceSigningError with `code`; returns the error for more checks.
@discardableResult
func expectError<R>(
    _ code: DeviceSigningError.Code, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> R
) -> DeviceSigningError? {
    do {
        _ = try body()
        Issue.record("Expected \(code), but the call succeeded.", sourceLocation: sourceLocation)
    } catch let error as DeviceSigningError {
        #expect(error.code == code, "got \(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("Expected DeviceSigningError \(code), got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// A fresh directory under the temporary directory, removed when `body` returns.
func withTemporaryDirectory<R>(_ body: (URL) throws -> R) throws -> R {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("keystore-tests-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(
        at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    defer { try? FileManager.default.removeItem(at: url) }
    return try body(url)
}

/// The DER inside a PEM block, and back (for tests that damage or patch the DER).
enum TestPEM {
    static func der(_ pem: String) -> [UInt8]? {
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return Data(base64Encoded: body).map(Array.init)
    }

    static func pem(label: String, der: [UInt8]) -> String {
        let base64 = Data(der).base64EncodedString()
        var lines = ["-----BEGIN \(label)-----"]
        var index = base64.startIndex
        while index < base64.endIndex {
            let end = base64.index(index, offsetBy: 64, limitedBy: base64.endIndex) ?? base64.endIndex
            lines.append(String(base64[index..<end]))
            index = end
        }
        lines.append("-----END \(label)-----")
        return lines.joined(separator: "\n") + "\n"
    }

    /// `der` with the first occurrence of `pattern` replaced by `replacement` (same length).
    static func patched(_ der: [UInt8], _ pattern: [UInt8], _ replacement: [UInt8]) -> [UInt8]? {
        guard pattern.count == replacement.count, der.count >= pattern.count else { return nil }
        for start in 0...(der.count - pattern.count) where Array(der[start..<(start + pattern.count)]) == pattern {
            var result = der
            result.replaceSubrange(start..<(start + pattern.count), with: replacement)
            return result
        }
        return nil
    }
}
