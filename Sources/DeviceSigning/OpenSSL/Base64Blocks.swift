internal import CDeviceSigningShim

extension Base64 {
    /// The shim's SSSE3 decoder of whole 16-character base64url blocks (docs/ARCHITECTURE.md,
    /// "Where C is, and why"): `blocks` blocks at `source` into 12 bytes each at `target`, which
    /// has 4 bytes to spare after the last. How many it decoded (0 without SSSE3), and whether a
    /// character of one was outside the alphabet.
    static func decodeURLBlocks(
        _ source: UnsafeRawPointer, blocks: Int, into target: UnsafeMutableRawPointer
    ) -> (decoded: Int, invalid: Bool) {
        guard blocks > 0 else { return (0, false) }
        var invalid: Int32 = 0
        let decoded = dss_base64url_decode_blocks(
            source.assumingMemoryBound(to: UInt8.self), blocks, target.assumingMemoryBound(to: UInt8.self), &invalid)
        return (Int(decoded), invalid != 0)
    }
}
