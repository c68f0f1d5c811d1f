#include "io/build_reader.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "core/limits.h"
#include "core/units.h"
#include "io/scenario_reader.h"

namespace trainplan {

namespace {

int CountOr(const Field& section, const char* key, int fallback) {
  const auto v = section.Get(key);
  return v ? static_cast<int>(v->Int(limits::kNodeParts)) : fallback;
}

/// A catalog part named at `v`; an unknown name fails naming the field with the closest names.
template <typename Find>
auto Part(const Field& v, Find find) -> decltype(find(std::string())) {
  const std::string name = v.String();
  try {
    return find(name);
  } catch (const InputError& e) {
    throw InputError(v.path(), e.value(), e.allowed());
  }
}

std::vector<BuildDrive> ReadStorage(const Field& storage) {
  std::vector<BuildDrive> drives;
  for (const Field& d : storage.Items("a list of {\"drive\": ID, \"count\": N, \"capacity_tb\": TB}")) {
    d.CheckKeys({"drive", "count", "capacity_tb"});
    BuildDrive drive;
    drive.drive = Part(d.At("drive"), FindDrive);
    drive.count = CountOr(d, "count", 1);
    const auto capacity = d.Get("capacity_tb");
    drive.capacity_bytes = capacity ? capacity->Number(limits::kDriveTb.lo, limits::kDriveTb.hi) * 1e12 : drive.drive.capacity_bytes;
    drives.push_back(drive);
  }
  return drives;
}

}  // namespace

BuildRequest BuildFromDocument(const Field& doc) {
  if (!doc.IsObject()) throw InputError("build", doc.Shown(), "a JSON object");
  doc.CheckKeys({"name", "source", "gpu", "gpus", "nvlink", "cpu", "sockets", "ram_gb", "storage", "raid0", "psu",
                 "network", "cooling", "job"});
  BuildSpec b;
  if (const auto v = doc.Get("name")) b.name = v->String();
  else b.name = "build";
  if (const auto v = doc.Get("source")) b.source = v->String();
  if (!doc.Has("gpu")) doc.FailMember("gpu", "", "a GPU type (see the GPU catalog)");
  b.gpu = ReadGpu(doc.At("gpu"));
  // A build is one node: its GPUs are a node's.
  if (const auto v = doc.Get("gpus")) b.gpus = static_cast<int>(v->Int(limits::kGpusPerNode));
  if (const auto v = doc.Get("nvlink")) b.nvlink_claimed = v->Bool();
  if (!doc.Has("cpu")) doc.FailMember("cpu", "", "a CPU from the CPU catalog");
  const Field cpu = doc.At("cpu");
  b.cpu = Part(cpu, FindCpu);
  b.sockets = CountOr(doc, "sockets", 1);
  if (b.sockets > b.cpu.max_sockets) {
    doc.At("sockets").Fail(fmt::format("at most {} for the {} (impossible build)", b.cpu.max_sockets, b.cpu.name));
  }
  if (!doc.Has("ram_gb")) doc.FailMember("ram_gb", "", "a positive amount of RAM in GB");
  const Field ram = doc.At("ram_gb");
  b.ram_bytes = ram.Number(limits::kNodeRamGb.lo, limits::kNodeRamGb.hi) * kGB;
  if (b.ram_bytes > b.cpu.max_memory_bytes * b.sockets) {
    ram.Fail(fmt::format("at most {:.0f} GB on {} x {} (impossible build)", b.cpu.max_memory_bytes * b.sockets / kGB,
                         b.sockets, b.cpu.name));
  }
  if (const auto v = doc.Get("storage")) b.storage = ReadStorage(*v);
  if (const auto v = doc.Get("raid0")) b.raid0 = v->Bool();
  if (!doc.Has("psu")) doc.FailMember("psu", "", "{\"watts\": W, \"count\": N}");
  const Field psu = doc.At("psu");
  psu.CheckKeys({"watts", "count"});
  b.psu_w = psu.At("watts").Number(limits::kPsuWatts.lo, limits::kPsuWatts.hi);
  b.psus = CountOr(psu, "count", 1);
  if (const auto v = doc.Get("network")) {
    for (const Field& link : v->Items("a list of network link ids")) b.links.push_back(Part(link, FindLink).id);
  }
  if (const auto v = doc.Get("cooling")) {
    b.cooling = v->String();
    if (b.cooling != "air" && b.cooling != "liquid") v->Fail("air | liquid");
  }
  return {b, doc.Section("job").value()};
}

BuildRequest BuildFromJson(const nlohmann::json& doc) { return BuildFromDocument(Field(doc, "")); }

}  // namespace trainplan
