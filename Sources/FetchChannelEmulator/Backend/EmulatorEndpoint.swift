/// The backend endpoints the emulator counts requests for and can inject faults into.
/// The raw values are the names used by the control API (`/_emulator/faults`, `/_emulator/stats`).
public enum EmulatorEndpoint: String, Sendable, Hashable, CaseIterable, Codable {
    /// `POST …/dispatch/targets` and `PATCH …/dispatch/targets/{id}`.
    case targets
    /// `GET …/outofbandoperations/{deviceId}`.
    case operations
    /// `POST …/token/redeem/{kind}`.
    case redeem
}
