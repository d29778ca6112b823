/*
 * The range checks of the UCX_CUDA_MGI_* settings without a GPU: every
 * value UCX's parser takes but the transport cannot use is refused by
 * uct_cuda_mgi_iface_config_check, which the interface runs first.
 */
extern "C" {
#include "cuda_mgi_iface.h"
}

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>

#ifdef UCS_CONFIG_DBL_AUTO
#  define BW_AUTO UCS_CONFIG_DBL_AUTO
#else
#  define BW_AUTO UCS_CONFIG_BW_AUTO
#endif

namespace {

struct config_check : public ::testing::Test {
    uct_cuda_mgi_iface_config_t c;
    char *relay_names[2];
    char relay0[8] = "1", relay1[8] = "x";
    char topo[8]   = "";

    void SetUp() override {
        /* the defaults of the config table */
        memset(&c, 0, sizeof(c));
        c.max_poll         = 16;
        c.max_streams      = 16;
        c.max_outstanding  = 1024;
        c.max_short        = 16384;
        c.max_bcopy        = 65536;
        c.bandwidth        = BW_AUTO;
        c.latency          = 4e-6;
        c.paths            = 3;
        c.multipath_thresh = 16 << 20;
        c.chunk_size       = 2 << 20;
        c.stage_bufs       = 16;
        c.host_bandwidth   = BW_AUTO;
        c.topo_file        = topo;
        relay_names[0]     = relay0;
        relay_names[1]     = relay1;
        c.relays.names     = relay_names;
        c.relays.count     = 0;
        unsetenv("UCX_CUDA_MGI_MAX_STREAMS");
        unsetenv("UCX_CUDA_MGI_STAGE_BUFS");
    }

    ucs_status_t check() { return uct_cuda_mgi_iface_config_check(&c); }
};

} // namespace

TEST_F(config_check, defaults_and_good_values_taken)
{
    EXPECT_EQ(UCS_OK, check());
    c.bandwidth      = 100e9;
    c.host_bandwidth = 55e9;
    c.latency        = 0;
    c.relays.count   = 1;
    EXPECT_EQ(UCS_OK, check());
    setenv("UCX_CUDA_MGI_MAX_STREAMS", "16", 1);
    EXPECT_EQ(UCS_OK, check());
}

TEST_F(config_check, bandwidth_not_positive_or_not_finite_refused)
{
    const double inf = std::numeric_limits<double>::infinity();
    for (double bw : {-1e9, 0.0, std::nan(""), inf}) {
        SetUp();
        c.bandwidth = bw;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, check()) << "BW " << bw;
        SetUp();
        c.host_bandwidth = bw;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, check()) << "HOST_BW " << bw;
    }
}

TEST_F(config_check, latency_negative_nan_or_infinite_refused)
{
    for (double lat : {-1e-6, std::nan(""),
                       std::numeric_limits<double>::infinity()}) {
        SetUp();
        c.latency = lat;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, check()) << "LAT " << lat;
    }
}

TEST_F(config_check, integers_out_of_range_refused)
{
    unsigned uct_cuda_mgi_iface_config_t::*fields[] = {
        &uct_cuda_mgi_iface_config_t::max_poll,
        &uct_cuda_mgi_iface_config_t::max_streams,
        &uct_cuda_mgi_iface_config_t::max_outstanding,
        &uct_cuda_mgi_iface_config_t::stage_bufs,
    };
    for (auto f : fields) {
        SetUp();
        c.*f = 0;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, check());
    }
    SetUp(); c.max_streams = 33;          EXPECT_NE(UCS_OK, check());
    SetUp(); c.stage_bufs = 65;           EXPECT_NE(UCS_OK, check());
    SetUp(); c.max_bcopy = 0;             EXPECT_NE(UCS_OK, check());
    SetUp(); c.max_short = 1ull << 32;    EXPECT_NE(UCS_OK, check());
    SetUp(); c.chunk_size = 4095;         EXPECT_NE(UCS_OK, check());
    SetUp(); c.paths = 0;                 EXPECT_NE(UCS_OK, check());
    SetUp(); c.relays.count = 2;          EXPECT_NE(UCS_OK, check());
}

/* what UCX 1.13's parser wraps: 4294967297 reads as 1, -1 as 4294967295 */
TEST_F(config_check, wrapped_unsigned_text_refused)
{
    for (const char *v : {"4294967297", "4294967296", "-1", " -3",
                          "99999999999999999999999"}) {
        setenv("UCX_CUDA_MGI_MAX_STREAMS", v, 1);
        c.max_streams = 1;   /* what UCX made of it */
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, check()) << v;
    }
    unsetenv("UCX_CUDA_MGI_MAX_STREAMS");
    setenv("UCX_CUDA_MGI_STAGE_BUFS", "4294967312", 1);
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, check());
    unsetenv("UCX_CUDA_MGI_STAGE_BUFS");
}
