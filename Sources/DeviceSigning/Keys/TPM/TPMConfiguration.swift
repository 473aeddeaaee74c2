internal import CDeviceSigningShim
import Foundation

/// How to reach the TPM 2.0 that holds hardware-bound keys, through OpenSSL's `tpm2` provider
/// (Debian `tpm2-openssl`).
///
/// The TCTI (tss2's "TPM Command Transmission Interface" configuration) is `tcti` when set,
/// otherwise the process's `TPM2OPENSSL_TCTI` (the provider's own variable) when set and not
/// empty, otherwise ``defaultTCTI``, the kernel's resource manager. Never tss2's default search:
/// it ends at a simulator on localhost:2321, which any local user could run to be handed the
/// keys a device generates, so a TPM reached over the network is used only when named.
public struct TPMConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// The environment variable tpm2-openssl reads its TCTI from.
    public static let tctiVariable = "TPM2OPENSSL_TCTI"
    /// The longest TCTI string accepted.
    static let maximumTCTILength = Int(DSS_TPM_TCTI_MAX)
    /// The TCTI used when neither `tcti` nor `TPM2OPENSSL_TCTI` names one: `device:/dev/tpmrm0`.
    public static let defaultTCTI = DSS_TPM_DEFAULT_TCTI

    /// The TCTI, as `TPM2OPENSSL_TCTI` takes it: `device:/dev/tpmrm0` (the kernel's resource
    /// manager, on a device), `swtpm:host=127.0.0.1,port=2321` (a software TPM), `tabrmd`. nil:
    /// the process's `TPM2OPENSSL_TCTI`, or ``defaultTCTI`` when that is not set or empty.
    ///
    /// tpm2-openssl 1.1.1 reads its TCTI only from `TPM2OPENSSL_TCTI`, so a TCTI other than the
    /// variable's value is put there while the provider loads, and the previous value comes back
    /// after (a variable that was not set is then set and empty). The variable's entry is the
    /// library's own and is rewritten in place, so only a change that adds it can move the
    /// environment's array under another thread's `getenv`: a program that starts threads
    /// early sets `TPM2OPENSSL_TCTI` (even empty) before.
    public var tcti: String?
    /// The longest wait for one TPM operation, connecting included. A TPM that does not answer in
    /// time makes the operation fail with `.tpmUnavailable` instead of blocking its caller; the
    /// connection is then not used again (the key's next operation opens a new one).
    public var timeout: Duration

    public init(tcti: String? = nil, timeout: Duration = .seconds(30)) {
        self.tcti = tcti
        self.timeout = timeout
    }

    /// The TCTI of the environment (`TPM2OPENSSL_TCTI`, else ``defaultTCTI``), with the default
    /// timeout.
    public static let environment = TPMConfiguration()

    /// Whether OpenSSL's tpm2 provider module is installed (its file is in OpenSSL's module
    /// directory, or in `$OPENSSL_MODULES`). Nothing is loaded and no TPM is contacted.
    public static var isProviderInstalled: Bool { dss_tpm_provider_installed() == 1 }

    public var description: String { "TPMConfiguration(\(target), timeout: \(timeout))" }

    /// Which TCTI is tried, in words for error messages (configuration, never secret).
    var target: String {
        if let tcti { return "TCTI \"\(tcti)\"" }
        if let variable = ProcessInfo.processInfo.environment[Self.tctiVariable], !variable.isEmpty {
            return "TCTI \"\(variable)\" (from \(Self.tctiVariable))"
        }
        return "TCTI \"\(Self.defaultTCTI)\" (the default: \(Self.tctiVariable) is not set, or empty)"
    }

    /// The timeout in seconds for a Dispatch deadline (at least one millisecond).
    var timeoutSeconds: Double {
        let (seconds, attoseconds) = timeout.components
        return Swift.max(0.001, Double(seconds) + Double(attoseconds) / 1e18)
    }

    /// Refuses a TCTI that tss2 could not take: empty, too long, or with a NUL byte; a
    /// `TPM2OPENSSL_TCTI` too long to be used or put back after a load; and a TCTI (given, or the
    /// variable's when used) whose module is not one of ``modules``.
    func validate() throws {
        if let variable = ProcessInfo.processInfo.environment[Self.tctiVariable],
            variable.utf8.count > Self.maximumTCTILength
        {
            throw DeviceSigningError(
                .tpmUnavailable,
                "\(Self.tctiVariable) is \(variable.utf8.count) bytes; a TCTI configuration is at most "
                    + "\(Self.maximumTCTILength).")
        }
        if let tcti {
            guard !tcti.isEmpty, tcti.utf8.count <= Self.maximumTCTILength, !tcti.utf8.contains(0) else {
                throw DeviceSigningError(
                    .tpmUnavailable,
                    "The TCTI configuration must be 1 to \(Self.maximumTCTILength) "
                        + "bytes without NUL, such as device:/dev/tpmrm0 or swtpm:host=127.0.0.1,port=2321.")
            }
        }
        let effective = tcti ?? ProcessInfo.processInfo.environment[Self.tctiVariable].flatMap { $0.isEmpty ? nil : $0 }
        if let effective { try Self.checkModule(of: effective, target: target) }
    }

    /// Refuses `tcti` unless its module is one of ``modules``. Checked again on the very string a
    /// load passes to tss2, read under the loading lock (``TPMSession``): the variable can change
    /// between `validate()` and the load (another load puts its own TCTI there meanwhile).
    static func checkModule(of tcti: String, target: String) throws {
        let module = String(tcti.prefix { $0 != ":" })
        guard modules.contains(module) else {
            throw DeviceSigningError(
                .tpmUnavailable,
                "\(target) names the TCTI module \"\(module)\"; only \(modules.sorted().joined(separator: ", ")) "
                    + "are used (tss2 would load any library of that name, or run a program for cmd).")
        }
    }

    /// The TCTI modules a configuration may name: a kernel device, the software TPMs and the
    /// resource manager daemon. tss2 takes any name (or path) as a library to load, and its `cmd`
    /// module runs a program, so a TCTI from the environment must not reach it unchecked.
    static let modules: Set<String> = ["device", "mssim", "swtpm", "tabrmd"]
}
