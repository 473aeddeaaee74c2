// swift-tools-version:6.0
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "FetchChannel",
    products: [
        .library(name: "DeviceSigning", targets: ["DeviceSigning"]),
        .library(name: "FetchChannelWire", targets: ["FetchChannelWire"]),
        .library(name: "FetchChannel", targets: ["FetchChannel"]),
        .library(name: "FetchChannelEmulator", targets: ["FetchChannelEmulator"]),
        .library(name: "FetchChannelVectors", targets: ["FetchChannelVectors"]),
        .executable(name: "fetchchannel", targets: ["fetchchannel"]),
    ],
    targets: [
        // System OpenSSL 3 (libssl-dev); the header only includes OpenSSL's own headers.
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        // The few multi-step OpenSSL operations Swift cannot call cleanly (macros, OSSL_PARAM, ECDSA_SIG juggling).
        .target(
            name: "CDeviceSigningShim",
            dependencies: ["COpenSSL"]
        ),
        // The benchmark's C baselines (EVP_PKEY_sign/verify with a kept context, a libssl handshake
        // client, a libcurl client): benchmark only.
        .target(
            name: "CBenchmarkShim",
            dependencies: ["COpenSSL", "CCurl"]
        ),
        // System libcurl (libcurl4-openssl-dev), for the one HTTP transport; the header only includes curl.h.
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // Typed wrappers for libcurl's variadic calls (curl_easy_setopt and friends), which Swift cannot call.
        .target(
            name: "CCurlShim",
            dependencies: ["CCurl"]
        ),
        .target(
            name: "DeviceSigning",
            dependencies: ["COpenSSL", "CDeviceSigningShim"],
            swiftSettings: strict
        ),
        // The wire contract the client and the reference backend share: paths, header names, media
        // types, error codes, the rejection -> status mapping, HTTP-date.
        .target(
            name: "FetchChannelWire",
            dependencies: ["DeviceSigning"],
            swiftSettings: strict
        ),
        .target(
            name: "FetchChannel",
            dependencies: ["DeviceSigning", "FetchChannelWire", "CCurl", "CCurlShim"],
            swiftSettings: strict
        ),
        .target(
            name: "FetchChannelEmulator",
            dependencies: ["DeviceSigning", "FetchChannelWire", "COpenSSL", "CDeviceSigningShim"],
            swiftSettings: strict
        ),
        .target(
            name: "FetchChannelBenchmarks",
            dependencies: [
                "DeviceSigning", "FetchChannelWire", "FetchChannel", "FetchChannelEmulator", "COpenSSL",
                "CBenchmarkShim",
            ],
            swiftSettings: strict
        ),
        // The per-file checks of Vectors/ and the Wycheproof suites: run by the tests and by
        // `fetchchannel vectors verify`.
        .target(
            name: "FetchChannelVectors",
            dependencies: ["DeviceSigning", "FetchChannelWire", "FetchChannel"],
            swiftSettings: strict
        ),
        // The command-line tool's parser and commands, as a library so that tests can call them.
        .target(
            name: "FetchChannelCLI",
            dependencies: [
                "DeviceSigning", "FetchChannelWire", "FetchChannel", "FetchChannelEmulator",
                "FetchChannelVectors", "FetchChannelBenchmarks", "CDeviceSigningShim",
            ],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "fetchchannel",
            dependencies: ["FetchChannelCLI"],
            swiftSettings: strict
        ),
        .executableTarget(
            name: "fetchchannel-bench",
            dependencies: ["FetchChannelBenchmarks", "FetchChannelEmulator"],
            swiftSettings: strict
        ),
        // Test-only child process for the key store's crash-safety test (killed with SIGKILL).
        .executableTarget(
            name: "keystore-crash-child",
            dependencies: ["DeviceSigning"],
            swiftSettings: strict
        ),
        // What more than one test target uses: dedicated threads for blocking bodies, the package's
        // own file locations, vector reports as test issues.
        .target(
            name: "FetchChannelTestSupport",
            dependencies: ["DeviceSigning", "FetchChannelVectors", "FetchChannelEmulator"],
            path: "Tests/TestSupport",
            swiftSettings: strict
        ),
        .testTarget(
            name: "DeviceSigningTests",
            dependencies: [
                "FetchChannelTestSupport", "DeviceSigning", "FetchChannelWire", "FetchChannelVectors",
                "FetchChannelEmulator", "keystore-crash-child",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "FetchChannelWireTests",
            dependencies: ["FetchChannelTestSupport", "FetchChannelWire", "DeviceSigning"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "FetchChannelTests",
            dependencies: [
                "FetchChannelTestSupport", "FetchChannel", "FetchChannelWire", "DeviceSigning",
                "FetchChannelEmulator", "FetchChannelVectors",
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "FetchChannelEmulatorTests",
            dependencies: [
                "FetchChannelTestSupport", "FetchChannelEmulator", "FetchChannelWire", "DeviceSigning", "COpenSSL",
                // The client's decoder: what the emulator serves must read in the client.
                "FetchChannel",
            ],
            swiftSettings: strict
        ),
        // Parser unit tests, and tests that run the built `fetchchannel` and `fetchchannel-bench`
        // binaries as subprocesses (the dependencies on the executable targets make `swift test`
        // build them first).
        .testTarget(
            name: "CLITests",
            dependencies: [
                "FetchChannelTestSupport", "FetchChannelCLI", "fetchchannel", "fetchchannel-bench",
                "FetchChannelEmulator",
                "FetchChannelVectors", "DeviceSigning", "FetchChannelWire",
            ],
            swiftSettings: strict
        ),
    ]
)
