#pragma once
// The parts, power, facility, price and reliability figures of data/cpus.json and data/parts.json, typed.
// Each figure carries the source key or text the file gives it.
#include <array>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/hardware.h"
#include "catalog/load.h"

namespace trainplan {

/// A host CPU from data/cpus.json. Lanes, channels and memory are per socket, as vendors publish them.
struct CpuSpec {
  std::string id, name, vendor;
  std::vector<std::string> aliases;
  bool desktop = false;    // workstation part (one socket)
  bool on_module = false;  // sold only on a GPU module, its memory soldered beside it (Grace in GB200)
  int cores = 0;
  int threads = 0;
  int pcie_gen = 4;
  int pcie_lanes = 0;  // usable for add-in cards
  std::string memory_type;
  int memory_channels = 0;
  double max_memory_bytes = 0;
  int max_sockets = 1;
  double tdp_w = 0;
  double price_usd = 0;  // 0: no citable price
  std::string source, date;
};

/// A drive from data/parts.json.
struct DriveSpec {
  std::string id, name, tier;  // tier: nvme | u2 | sata | hdd
  bool desktop = false;        // client part for workstations
  double capacity_bytes = 0;
  double read_bytes_per_s = 0;
  double write_bytes_per_s = 0;
  int pcie_lanes = 0;
  double watts = 0;
  double usd_per_tb = 0;  // 0: no citable price
  std::string source;
};

/// A network adapter between nodes, for one of the links in data/links.json.
struct NicSpec {
  std::string id, name, link;
  int pcie_lanes = 16;
  std::string source;
};

/// A measured millisecond power peak of a GPU board.
struct GpuTransient {
  std::string gpu;  // GPU catalog id
  double board_w = 0, peak_w = 0;
  std::string window, source, date;
};

/// A reference server whose maximum input sizes the platform power of server nodes: DGX datasheets for
/// baseboard GPUs, a PCIe GPU server for PCIe cards.
struct PowerSystem {
  std::string id;
  bool pcie = false;  // PCIe cards in slots; else SXM/OAM modules on a baseboard
  int gpu_nvlink_gen = 0;
  int gpus = 0;
  double gpu_w = 0;
  int cpus = 0;
  std::string cpu;  // data/cpus.json id of the CPUs it ships with; empty: chosen by the buyer
  double cpu_w = 0;
  double max_input_w = 0;
  int psus = 0;  // 0: not published
  double psu_w = 0;
  int psus_required = 0;
  std::string source, date;
};

struct PowerFigures {
  std::vector<GpuTransient> gpu_transients;
  double psu_excursion_ratio = 0;  // ATX 3.0 excursion over sustained rating
  std::string psu_excursion_window, psu_excursion_source;
  double workstation_platform_w = 0;  // board, CPU at load, RAM, drives, fans of a workstation
  std::string workstation_platform_source;
  std::vector<PowerSystem> systems;
};

/// PSU ratings as sold and the 80 PLUS efficiency curves (load fractions ascending).
struct PsuFigures {
  std::vector<double> desktop_ratings_w, server_ratings_w;
  std::string desktop_source, server_source;
  std::vector<double> load, platinum;  // 80 PLUS Platinum, for workstation PSUs
  std::string efficiency_source;
};

/// Module sizes a memory channel takes (JEDEC, plus the non-binary DDR5 sizes).
struct DimmSizes {
  std::vector<double> ddr4_bytes, ddr5_bytes;
  std::string source;
};

struct RamPrice {
  double server_usd_per_gb = 0, desktop_usd_per_gb = 0;
  std::string source, date;  // source: a key of the file's "sources"
};

struct CoolingFigures {
  double air_rack_kw_max = 0;  // beyond this a rack needs liquid cooling
  std::string air_rack_source;
  double liquid_gpu_w_min = 0;  // GPUs of this board power are sold liquid-cooled only
  std::string liquid_gpu_source;
  double btu_per_h_per_w = 0;
  std::string btu_source;
};

struct Currency;

/// The electricity price a lab or data centre pays in one region, in the currency it was published in.
struct ElectricityTariff {
  const Currency* currency = nullptr;  // as published
  double per_kwh = 0;                  // in `currency`
  double usd_per_kwh = 0;              // at the exchange rate of data/prices.json
  std::string source;                  // a key of the file's "sources"
  std::string source_text, date;
};

struct FacilityFigures {
  double pue = 0;
  std::string pue_source, pue_date;
  double colocation_usd_per_kw_month = 0;
  std::string colocation_source, colocation_date;
  std::map<std::string, ElectricityTariff> electricity;  // by region id of `regions`; "us" always present
};

struct GpuPurchase {
  std::string gpu;  // GPU catalog id
  double usd = 0;
  std::string source, date;
  std::string market{};  // "cn": a price of the mainland market, for the region renting there; empty: any region
};
/// A complete system sold with its GPUs.
struct SystemPurchase {
  std::string id, gpu;
  int gpus = 0;
  double usd = 0;
  std::string source, date;
  std::string market{};  // as GpuPurchase::market
};
struct PurchasePrices {
  std::vector<GpuPurchase> gpus;
  std::vector<SystemPurchase> systems;
};

/// How SXM/OAM modules are sold: whole baseboards (or racks) of these sizes, smallest first.
struct GpuBoard {
  std::string name;               // "HGX H100/H200"
  std::vector<std::string> gpus;  // GPU catalog ids
  std::vector<int> sizes;         // GPUs per board, ascending
  std::string cpu;                // data/cpus.json id of a CPU carried on the module; empty: none
  int gpus_per_cpu = 0;
  std::string source, date;
};

/// What a wall circuit delivers to a desktop build.
struct WallCircuits {
  double us_120v_15a_w = 0;          // nominal
  double us_continuous_fraction = 0;  // of the rating, for loads of 3 h or more
  std::string us_source;
  double eu_230v_16a_w = 0;
  std::string eu_source;
};

/// Expansion-slot widths of desktop cards and what a workstation board and case hold.
struct CardSlots {
  int board_slots = 0;
  int case_slots = 0;
  std::string board_source;
  std::map<std::string, double> cards;  // GPU id -> slots, where the form factor does not say
  std::string default_source;
};

struct CloudFigures {
  double reserved_1y_discount = 0;  // fraction off on-demand for a year's commitment
  std::string reserved_source, reserved_date;
};

/// Whether a foreign part may be sold into a region: freely, only with an export licence, or not (a licence
/// reviewed under a presumption of denial: only capacity installed before the rule is there to rent).
enum class ExportStatus { kAllowed, kLicence, kRestricted };
const char* ToString(ExportStatus s);  // "allowed" | "licence" | "restricted"

/// Whether `s` is a date YYYY-MM-DD, as export rulings and the date they are read on are written.
bool IsIsoDate(std::string_view s);

/// A change of a part's export status: from `from` (YYYY-MM-DD) on, the rule in words and its source.
struct ExportRuling {
  std::string from;
  ExportStatus status = ExportStatus::kAllowed;
  std::string rule, source;
  std::string rule_zh;  // for Chinese readers; empty: `rule` is shown
};

/// A part a region lists: domestic (no export rule applies), or foreign with its rulings, oldest first; before
/// the first it was not sold there.
struct RegionPart {
  std::string gpu;  // GPU catalog id
  bool domestic = false;
  std::vector<ExportRuling> history;
  /// The ruling in force on `date` (YYYY-MM-DD); nullptr when domestic or not yet sold there.
  const ExportRuling* On(const std::string& date) const;
};

/// A region and what it allows: the accelerators (export rules by date) and how a recommendation presents them.
struct Region {
  std::string id;                // "cn"
  std::vector<RegionPart> parts;  // the accelerators sold or rented there; empty: no restriction
  std::string source, note;
  std::string note_zh;  // for Chinese readers; empty: `note` is shown
  std::vector<std::string> foreign_vendors;  // their parts rank after domestic ones
  std::string reference_gpu;                 // options are compared with as many of this GPU; empty: none
  int options_per_kind = 2;                  // on-prem and cloud options shown
  std::string rental_market;                 // the offers rented there (RentalOffer::market); empty: international
};

/// A measured mean time to failure of jobs of `gpus` GPUs of one generation.
struct GenerationMttf {
  double mttf_h = 0, gpus = 0;
  std::string source, date;
};

/// The interruption rate of the largest published run, the rates measured on other GPU generations' clusters
/// (indexed by GpuGeneration; mttf_h 0 where none is published) and the relaunch overhead.
struct ReliabilityFigures {
  double interruptions = 0, days = 0, gpus = 0;
  std::string source, date;
  std::array<GenerationMttf, kGpuGenerations> by_generation{};
  double restart_overhead_s = 0;
  std::string restart_source;
};

/// What the host of a training process holds and runs.
struct HostFigures {
  int loader_workers_per_gpu = 0;
  std::string loader_source;
  double prefetch_factor = 0;  // batches per loader worker
  std::string prefetch_source;
  double process_gb_per_gpu = 0;
  std::string process_source;
};

/// data/parts.json.
struct PartsCatalog {
  std::map<std::string, std::string> sources;  // key -> citation
  DimmSizes dimms;
  RamPrice ram_price;
  std::vector<DriveSpec> drives;
  std::vector<NicSpec> nics;
  PsuFigures psu;
  PowerFigures power;
  CoolingFigures cooling;
  FacilityFigures facility;
  PurchasePrices purchase;
  std::vector<GpuBoard> boards;
  std::vector<SystemPurchase> system_prices;  // complete systems not in "purchase"
  WallCircuits circuits;
  CardSlots card_slots;
  CloudFigures cloud;
  std::vector<Region> regions;
  ReliabilityFigures reliability;
  HostFigures host;

  /// The citation a source key stands for; the key itself when the file defines none.
  const std::string& SourceText(const std::string& key) const;
  /// The region `id`, or nullptr.
  const Region* FindRegion(std::string_view id) const;
  /// The part `gpu` of a region's list, or nullptr.
  static const RegionPart* FindPart(const Region& region, std::string_view gpu);
};

/// data/parts.json and data/cpus.json, loaded and validated once.
const PartsCatalog& Parts();
const std::vector<CpuSpec>& CpuCatalog();

/// Finds a CPU by id, name or alias (normalized); throws InputError naming the closest ones.
const CpuSpec& FindCpu(const std::string& name);
const std::vector<DriveSpec>& DriveCatalog();
const DriveSpec& FindDrive(const std::string& name);
const std::vector<NicSpec>& NicCatalog();

/// Reads a parts or CPU document; a bad entry throws InternalError naming `file`, the entry and the key.
PartsCatalog LoadParts(std::string_view text, std::string_view file, const std::vector<UserCatalog>& overlays = RegisteredUserCatalogs());
std::vector<CpuSpec> LoadCpus(std::string_view text, std::string_view file, const std::vector<UserCatalog>& overlays = RegisteredUserCatalogs());

}  // namespace trainplan
