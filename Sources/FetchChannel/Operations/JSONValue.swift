import DeviceSigning

/// Any JSON value, for the parts of an operation whose shape belongs to the backend or the app
/// (`payload.data`, `additionalInformation`): the one type the package's JSON reader
/// (`StrictJSON`, in DeviceSigning) builds, named here for users of this module.
public typealias JSONValue = DeviceSigning.JSONValue
