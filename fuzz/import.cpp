// The importers of the published formats (io/import/): the first byte picks one, the rest is its
// JSON. Names inside the files are fixed here ("m" for the model, "g" for the GPU, "c" for the
// cluster) so that the committed seeds reach past the lookups.
#include "fuzz.hpp"
#include "hetplan/fixtures/example.hpp"
#include "hetplan/io.hpp"
#include "hetplan/io/import/cephalo.hpp"
#include "hetplan/io/import/sailor.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace hetplan;
    if (size == 0) return 0;
    const int which = data[0] % 11;
    fuzz::refuse_cleanly([&] {
        const io::json j = io::parse_text(fuzz::text(data + 1, size - 1), "published.json");
        const io::cursor root(j, "published.json");
        cluster hw = fixtures::default_example().hw;
        profile_table t;
        switch (which) {
            case 0: io::sailor::import_profile(root, "A100-40", t), t.check("published.json"); break;
            case 1: io::sailor::import_llm_info(root, "m", 0).check("published.json"); break;
            case 2: static_cast<void>(io::sailor::import_network(root, hw)); break;
            case 3: io::sailor::import_intra_node(root, hw); break;
            case 4: io::sailor::import_homogeneous_network(root, hw); break;
            case 5: io::sailor::import_egress_prices(root, hw); break;
            case 6: io::sailor::import_training_config(root).first.check("published.json"); break;
            case 7: static_cast<void>(io::sailor::import_cluster_config(root)); break;
            case 8: io::cephalo::import_latencies(root, {"m", "g", 512, "float32"}, "A100-40", 4, t), t.check("published.json"); break;
            case 9: static_cast<void>(io::cephalo::import_compute_memory(root, "c", "m", "float32")); break;
            default: io::cephalo::import_model_stats(root, "m", 512).check("published.json"); break;
        }
    });
    return 0;
}
