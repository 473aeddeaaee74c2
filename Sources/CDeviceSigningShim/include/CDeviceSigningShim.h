#ifndef C_DEVICE_SIGNING_SHIM_H
#define C_DEVICE_SIGNING_SHIM_H
// Umbrella header of the shim. Every symbol is prefixed `dss_`.
#include "dss_keys.h"
#include "dss_ecdsa.h"
#include "dss_digest.h"
#include "dss_pkcs8.h"
#include "dss_private_der.h"
#include "dss_jwe.h"
#include "dss_tpm.h"
#include "dss_tls.h"
#include "dss_base64.h"
#include "dss_random.h"
#include "dss_descriptors.h"
#endif
