import DeviceSigning

extension DeviceSignatureSigner {
    /// The HTTP header field that carries the value (``WireHeader/deviceSignature``).
    public static let headerName = WireHeader.deviceSignature
}
