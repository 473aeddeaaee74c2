import DeviceSigning

/// A refused in-process control call (``ReferenceBackend``). Equal when the codes are.
public struct EmulatorError: CodedError {
    public struct Code: ErrorCode {
        public let rawValue: String

        /// The emulator holds the most dispatch targets (or injected faults) it keeps.
        public static let capacityReached = Code(rawValue: "capacityReached")
        /// The dispatch was refused (a malformed argument, or too many operations): the reason is
        /// the answer the control API gives.
        public static let dispatchRefused = Code(rawValue: "dispatchRefused")
        /// The fault cannot be injected as given.
        public static let invalidFault = Code(rawValue: "invalidFault")
    }

    public let code: Code
    public let reason: String
}
