extension DeviceSigningError.Code {
    /// A dispatch target id that is empty, longer than 256 UTF-16 code units, or holds a control
    /// character.
    public static let invalidDispatchTargetId = DeviceSigningError.Code("invalidDispatchTargetId")
    /// A request id that is empty or longer than 64 UTF-16 code units.
    public static let invalidRequestId = DeviceSigningError.Code("invalidRequestId")
    /// A time that does not fit in a signed 64-bit count of milliseconds (for example a clock
    /// offset that overflows).
    public static let timeOutOfRange = DeviceSigningError.Code("timeOutOfRange")
    /// A configuration value outside its allowed range (a negative tolerance, a zero capacity).
    public static let invalidConfiguration = DeviceSigningError.Code("invalidConfiguration")
}
