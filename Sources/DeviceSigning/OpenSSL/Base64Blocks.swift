internal import CDeviceSigningShim

extension Base64 {
    /// The shim's AVX2 decoder of whole 32-character base64url runs (docs/ARCHITECTURE.md, "Where
    /// C is, and why"): `runs` runs at `source` into 24 bytes each at `target`, which has 8 bytes
    /// to spare after the last. How many it decoded (0 without AVX2), and whether a character of
    /// one was outside the alphabet.
    static func decodeURLRuns(
        _ source: UnsafeRawPointer, runs: Int, into target: UnsafeMutableRawPointer
    ) -> (decoded: Int, invalid: Bool) {
        guard runs > 0 else { return (0, false) }
        var invalid: Int32 = 0
        let decoded = dss_base64url_decode_pairs(
            source.assumingMemoryBound(to: UInt8.self), runs, target.assumingMemoryBound(to: UInt8.self), &invalid)
        return (Int(decoded), invalid != 0)
    }
}
