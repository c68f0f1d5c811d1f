#include "catalog/job_costs.h"

#include "catalog/load.h"

namespace trainplan {

namespace {

/// {"value": x, "source": key or "assumption", "date": ..., "note": optional}; the value positive, at most `hi`.
SourcedFigure ReadFigure(const Field& section, const Field& sources, std::string_view key, double hi) {
  const Field f = section.At(key);
  f.CheckKeys({"value", "source", "date", "note"});
  SourcedFigure out;
  out.value = Positive(f, "value", hi);
  out.source = f.At("source").String();
  if (!out.assumption() && !sources.Has(out.source)) f.At("source").Fail("a key of the file's sources, or assumption");
  out.date = f.At("date").String();
  return out;
}

}  // namespace

const BillingRule* JobCosts::FindBilling(std::string_view id) const {
  for (const auto& b : billing)
    if (b.id == id) return &b;
  return nullptr;
}

JobCosts LoadJobCosts(std::string_view text, std::string_view file, const std::vector<UserCatalog>& overlays) {
  const CatalogDocument doc(text, file, overlays);
  const Field root = doc.Root();
  root.CheckKeys({"about", "sources", "startup", "checkpoint", "billing"});
  const Field sources = root.At("sources");
  const Field startup = root.At("startup");
  startup.CheckKeys({"provisioning_s", "image_bytes", "image_extract_bytes_per_s", "process_start_s",
                     "weights_read_bytes_per_s", "nccl_init_base_s", "nccl_init_s_per_node"});
  constexpr double kDay = 86400, kMaxBytes = 1e15, kMaxRate = 1e12;
  JobCosts out;
  out.provisioning_s = ReadFigure(startup, sources, "provisioning_s", kDay);
  out.image_bytes = ReadFigure(startup, sources, "image_bytes", kMaxBytes);
  out.image_extract_bytes_per_s = ReadFigure(startup, sources, "image_extract_bytes_per_s", kMaxRate);
  out.process_start_s = ReadFigure(startup, sources, "process_start_s", kDay);
  out.weights_read_bytes_per_s = ReadFigure(startup, sources, "weights_read_bytes_per_s", kMaxRate);
  out.nccl_init_base_s = ReadFigure(startup, sources, "nccl_init_base_s", kDay);
  out.nccl_init_s_per_node = ReadFigure(startup, sources, "nccl_init_s_per_node", kDay);
  const Field checkpoint = root.At("checkpoint");
  checkpoint.CheckKeys({"write_bytes_per_s"});
  out.checkpoint_write_bytes_per_s = ReadFigure(checkpoint, sources, "write_bytes_per_s", kMaxRate);
  for (const auto& [id, b] : root.At("billing").Members()) {
    b.CheckKeys({"increment_s", "minimum_s", "source", "date", "note"});
    BillingRule rule;
    rule.id = id;
    rule.increment_s = Positive(b, "increment_s", kDay);
    rule.minimum_s = b.At("minimum_s").Number(0, kDay, true);
    rule.source = b.At("source").String();
    if (rule.source != "assumption" && !sources.Has(rule.source))
      b.At("source").Fail("a key of the file's sources, or assumption");
    rule.date = b.At("date").String();
    out.billing.push_back(std::move(rule));
  }
  return out;
}

const JobCosts& JobCostCatalog() {
  static const JobCosts catalog = LoadJobCosts(CatalogText("job_costs.json"), "job_costs.json");
  return catalog;
}

}  // namespace trainplan
