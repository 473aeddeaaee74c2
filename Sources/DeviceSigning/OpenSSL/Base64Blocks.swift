internal import CDeviceSigningShim

extension Base64 {
    /// The widest of the shim's block decoders a base64url decode may use: the widest the CPU has
    /// in production; tests pin each one so that every path runs on a machine that has it.
    enum BlockDecoder: Sendable {
        /// None: the portable Swift loops only.
        case portable
        /// 16 characters at a time with SSSE3.
        case ssse3
        /// The widest the CPU has: 32 characters at a time with AVX2, else SSSE3.
        case widest

        fileprivate var shimLevel: Int32 {
            switch self {
            case .portable: Int32(DSS_BASE64_PORTABLE)
            case .ssse3: Int32(DSS_BASE64_SSSE3)
            case .widest: Int32(DSS_BASE64_AVX2)
            }
        }
    }

    /// The shim's SIMD decoder of whole 16-character base64url blocks (docs/ARCHITECTURE.md,
    /// "Where C is, and why"): `blocks` blocks at `source` into 12 bytes each at `target`, which
    /// has 4 bytes to spare after the last. How many it decoded (0 without SSSE3 or with
    /// `.portable`), and whether a character of one was outside the alphabet.
    static func decodeURLBlocks(
        _ source: UnsafeRawPointer, blocks: Int, into target: UnsafeMutableRawPointer, widest: BlockDecoder
    ) -> (decoded: Int, invalid: Bool) {
        guard blocks > 0 else { return (0, false) }
        var invalid: Int32 = 0
        let decoded = dss_base64url_decode_blocks(
            source.assumingMemoryBound(to: UInt8.self), blocks, target.assumingMemoryBound(to: UInt8.self), &invalid,
            widest.shimLevel)
        return (Int(decoded), invalid != 0)
    }
}
