/// How a passphrase becomes the AES-256-CBC key of an encrypted PKCS#8 file (PBES2, RFC 8018).
///
/// Costs on one core of this project's machine (OpenSSL 3.0.19; a busy machine is up to twice
/// as slow). Every encryption and every decryption pays the time once:
///
/// | value | time | memory |
/// |---|---|---|
/// | `.scrypt(n: 16384, r: 8, p: 1)` (the default) | ≈ 0.08 s | 16 MiB |
/// | `.scrypt(n: 1024, r: 8, p: 1)` (the smallest N; for tests) | ≈ 0.005 s | 1 MiB |
/// | `.pbkdf2SHA256(iterations: 600_000)` (`.pbkdf2Default`) | ≈ 0.35 s | negligible |
/// | `.pbkdf2SHA256(iterations: 100_000)` (the minimum) | ≈ 0.06 s | negligible |
///
/// scrypt is the default because its memory cost makes guessing on GPUs and ASICs expensive; the
/// PBKDF2 value follows the OWASP 2023 recommendation for PBKDF2-HMAC-SHA256 and suits tools that
/// lack scrypt.
///
/// Limits, checked by `validate()` before anything is written:
/// - scrypt: N a power of two and at least 2^10; r ≥ 1; p ≥ 1; N < 2^(16·r) (RFC 7914); memory
///   128·r·(N + 2 + p) bytes at most 32 MiB, because OpenSSL 3.0 refuses more when it *reads*
///   the file (N = 2^15 with r = 8 is already over: such a file could never be opened); work
///   N·r·p at most 2^22 (about 1.5 s), which also bounds r·p.
/// - PBKDF2: at least 100,000 iterations, at most 5,000,000 (about 2.5 s). A file being opened
///   may use another HMAC: at most 2,500,000 iterations with SHA-1 or SHA-224, 2,000,000 with
///   SHA-384 or SHA-512, which cost about as much.
///
/// The upper limits also apply to files being opened, so a crafted file cannot make decryption
/// run for minutes.
public enum KeyDerivation: Sendable, Hashable, CustomStringConvertible {
    /// scrypt (RFC 7914) with cost N, block size r and parallelization p.
    case scrypt(n: Int, r: Int, p: Int)
    /// PBKDF2 with HMAC-SHA-256 (RFC 8018 §5.2).
    case pbkdf2SHA256(iterations: Int)

    /// `.scrypt(n: 16384, r: 8, p: 1)`: about 0.08 s and 16 MiB.
    public static let `default` = KeyDerivation.scrypt(n: 16384, r: 8, p: 1)
    /// `.pbkdf2SHA256(iterations: 600_000)`: about 0.35 s.
    public static let pbkdf2Default = KeyDerivation.pbkdf2SHA256(iterations: 600_000)

    public static let minimumScryptN = 1 << 10
    public static let minimumPBKDF2Iterations = 100_000
    public static let maximumPBKDF2Iterations = 5_000_000
    /// OpenSSL 3.0's default scrypt memory limit, which applies when a file is decrypted.
    public static let maximumScryptMemoryBytes = 32 * 1024 * 1024
    /// The largest N·r·p accepted (2^22).
    public static let maximumScryptWork = 1 << 22

    /// Throws `.invalidKeyDerivation` when the parameters are outside the limits listed on the type.
    public func validate() throws {
        switch self {
        case let .scrypt(n, r, p):
            guard n >= Self.minimumScryptN else {
                throw DeviceSigningError(
                    .invalidKeyDerivation,
                    "scrypt N is \(n); it must be a power of two and at least \(Self.minimumScryptN).")
            }
            try Self.checkScrypt(n: n, r: r, p: p, overLimit: .invalidKeyDerivation)
        case let .pbkdf2SHA256(iterations):
            guard iterations >= Self.minimumPBKDF2Iterations else {
                throw DeviceSigningError(
                    .invalidKeyDerivation,
                    "PBKDF2 with \(iterations) iterations is too weak; use at least \(Self.minimumPBKDF2Iterations) (600,000 recommended)."
                )
            }
            try Self.checkPBKDF2(iterations: iterations, overLimit: .invalidKeyDerivation)
        }
    }

    /// What OpenSSL needs for scrypt to succeed, plus this package's cost limits. Shared by
    /// `validate()` and by the check of the parameters of a file about to be decrypted;
    /// `overLimit` is the code for parameters that are valid but too costly.
    static func checkScrypt(n: Int, r: Int, p: Int, overLimit: DeviceSigningError.Code) throws {
        guard n >= 2, n & (n - 1) == 0 else {
            throw DeviceSigningError(.invalidKeyDerivation, "scrypt N is \(n); it must be a power of two.")
        }
        guard r >= 1, p >= 1 else {
            throw DeviceSigningError(.invalidKeyDerivation, "scrypt r and p must be at least 1; got r=\(r), p=\(p).")
        }
        // RFC 7914 §2: N < 2^(128·r/8); for r ≥ 4 every Int N is below it.
        guard r >= 4 || n < 1 << (16 * r) else {
            throw DeviceSigningError(
                .invalidKeyDerivation, "scrypt N=\(n) is too large for r=\(r) (N must be below 2^(16·r)).")
        }
        // Work first: once N·r·p ≤ 2^22, the memory arithmetic below cannot overflow.
        let work = product([n, r, p])
        guard work <= maximumScryptWork else {
            throw DeviceSigningError(
                overLimit,
                "scrypt N·r·p for N=\(n), r=\(r), p=\(p) is above the limit \(maximumScryptWork) (about 1.5 s).")
        }
        let memory = KeyDerivation.scrypt(n: n, r: r, p: p).memoryBytes
        guard memory <= maximumScryptMemoryBytes else {
            throw DeviceSigningError(
                overLimit,
                "scrypt N=\(n), r=\(r), p=\(p) needs \(memory / 1024) KiB of memory; OpenSSL 3.0 opens files needing at most 32 MiB (with r=8, N is at most 16384)."
            )
        }
    }

    /// `prf` is the HMAC's hash as ``PBES2Parameters`` names it ("SHA-1", "SHA-256", …); files
    /// may use any of them.
    static func checkPBKDF2(iterations: Int, prf: String = "SHA-256", overLimit: DeviceSigningError.Code) throws {
        guard iterations >= 1 else {
            throw DeviceSigningError(.invalidKeyDerivation, "PBKDF2 needs at least one iteration.")
        }
        let limit = maximumPBKDF2Iterations(prf: prf)
        guard iterations <= limit else {
            throw DeviceSigningError(
                overLimit,
                "PBKDF2-HMAC-\(prf) with \(iterations) iterations is above the limit \(limit) (about 2.5 s).")
        }
    }

    /// The iterations that cost about what ``maximumPBKDF2Iterations`` of HMAC-SHA-256 cost. An
    /// iteration of HMAC-SHA-1 or -SHA-224 takes about twice as long with OpenSSL 3.0 (SHA-256
    /// has the fastest code), of HMAC-SHA-384 or -SHA-512 about 2.4 times (`openssl kdf … PBKDF2`,
    /// 1,000,000 iterations each). A single limit let a file ask for over 8 s.
    static func maximumPBKDF2Iterations(prf: String) -> Int {
        switch prf {
        case "SHA-256": maximumPBKDF2Iterations
        case "SHA-1", "SHA-224": maximumPBKDF2Iterations / 2
        default: maximumPBKDF2Iterations * 2 / 5
        }
    }

    /// The product of non-negative factors, or Int.max on overflow.
    private static func product(_ factors: [Int]) -> Int {
        var result = 1
        for factor in factors {
            let (next, overflow) = result.multipliedReportingOverflow(by: factor)
            if overflow { return Int.max }
            result = next
        }
        return result
    }

    /// Memory the derivation needs, in bytes, as OpenSSL counts it (scrypt: 128·r·(N + 2 + p);
    /// PBKDF2: 0). Int.max when the parameters overflow.
    public var memoryBytes: Int {
        switch self {
        case let .scrypt(n, r, p):
            let (sum, overflow1) = n.addingReportingOverflow(p)
            let (blocks, overflow2) = sum.addingReportingOverflow(2)
            return overflow1 || overflow2 ? Int.max : Self.product([128, r, blocks])
        case .pbkdf2SHA256:
            return 0
        }
    }

    /// For example `scrypt(N=16384, r=8, p=1)` or `pbkdf2-sha256(iterations=600000)`.
    public var description: String {
        switch self {
        case let .scrypt(n, r, p): "scrypt(N=\(n), r=\(r), p=\(p))"
        case let .pbkdf2SHA256(iterations): "pbkdf2-sha256(iterations=\(iterations))"
        }
    }
}
