import CDeviceSigningShim

/// Overwrites memory with zeros in a way the compiler may not optimise away (OPENSSL_cleanse).
func secureZero(_ buffer: UnsafeMutableRawBufferPointer) {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    dss_cleanse(base, buffer.count)
}
