#include "catalog/parts.h"

#include <algorithm>
#include <cctype>

#include "base/error.h"
#include "catalog/hardware.h"
#include "catalog/load.h"
#include "catalog/prices.h"

namespace trainplan {

namespace {

constexpr double kBytesPerGb = 1e9;  // capacities of drives, DIMMs and host memory are decimal
constexpr double kBytesPerTb = 1e12;
constexpr double kMaxWatts = 1e6;
constexpr double kMaxUsd = 1e9;

template <typename T>
const T& FindByName(const std::vector<T>& items, const std::string& name, const char* field) {
  const std::string key = NormalizeName(name);
  std::vector<std::string> names;
  for (const auto& item : items) {
    if (NormalizeName(item.id) == key || NormalizeName(item.name) == key) return item;
    if constexpr (requires { item.aliases; }) {
      for (const auto& a : item.aliases)
        if (NormalizeName(a) == key) return item;
    }
    names.push_back(item.id);
  }
  ThrowUnknownName(field, name, names);
}

/// A GPU catalog id (data/gpus.json), exactly as the catalog spells it.
std::string GpuId(const Field& field) {
  std::string id = field.String();
  for (const auto& g : GpuCatalog())
    if (g.id == id) return id;
  field.Fail("a GPU id of data/gpus.json");
}

/// A GPU vendor as data/gpus.json spells it.
std::string GpuVendor(const Field& field) {
  std::string vendor = field.String();
  for (const auto& g : GpuCatalog())
    if (g.vendor == vendor) return vendor;
  field.Fail("a vendor of data/gpus.json");
}

/// A CPU id of data/cpus.json, exactly as that file spells it.
std::string CpuId(const Field& field) {
  std::string id = field.String();
  for (const auto& c : CpuCatalog())
    if (c.id == id) return id;
  field.Fail("a CPU id of data/cpus.json");
}

GpuBoard ReadBoard(const Field& b) {
  GpuBoard out{b.At("name").String(), {}, {}, "", 0, b.At("source").String(), b.At("date").String()};
  if (b.Has("cpu")) {
    out.cpu = CpuId(b.At("cpu"));
    out.gpus_per_cpu = Count(b, "gpus_per_cpu", 64);
  }
  for (const Field& g : b.At("gpus").Items()) out.gpus.push_back(GpuId(g));
  for (const Field& n : b.At("sizes").Items()) out.sizes.push_back(static_cast<int>(n.Int({1, 1024})));
  if (out.sizes.empty() || !std::is_sorted(out.sizes.begin(), out.sizes.end()))
    b.At("sizes").Fail("board sizes in ascending order");
  return out;
}

/// A currency of data/prices.json's exchange rates, by its code.
const Currency& CatalogCurrency(const Field& code) {
  for (const Currency& c : ExchangeRateTable().currencies)
    if (c.code == code.String()) return c;
  code.Fail("a currency of data/prices.json exchange_rates");
}

/// A purchase price in US dollars: `usd`, or `price` in the `currency` it was published in (yuan stay yuan in
/// the file), converted at the catalog's dated exchange rate.
double PurchaseUsd(const Field& e) {
  if (!e.Has("currency")) return Positive(e, "usd", kMaxUsd);
  return ToUsd(Positive(e, "price", kMaxUsd * 100), CatalogCurrency(e.At("currency")));
}

/// The market a purchase price is from: "cn" for mainland China, empty for any.
std::string MarketOf(const Field& e) {
  if (!e.Has("market")) return "";
  if (e.At("market").String() != "cn") e.At("market").Fail("cn (mainland China), or no market");
  return "cn";
}

SystemPurchase ReadSystemPrice(const Field& e) {
  return {e.At("id").String(),     GpuId(e.At("gpu")), Count(e, "gpus", 1024), PurchaseUsd(e),
          e.At("source").String(), e.At("date").String(), MarketOf(e)};
}

CardSlots ReadCardSlots(const Field& c, const std::string& file) {
  CardSlots out;
  out.board_slots = Count(c, "board_slots", 16);
  out.case_slots = Count(c, "case_slots", 16);
  out.board_source = c.At("board_source").String();
  out.default_source = c.At("default_source").String();
  for (const Field& card : c.At("cards").Items()) {
    const Field e = Named(card, file, "card_slots.cards." + card.At("gpu").String());
    out.cards[GpuId(e.At("gpu"))] = Positive(e, "slots", 8);
  }
  return out;
}

/// A YYYY-MM-DD date, compared as text.
std::string Date(const Field& f) {
  std::string d = f.String();
  if (!IsIsoDate(d)) f.Fail("a date YYYY-MM-DD");
  return d;
}

ExportRuling ReadRuling(const Field& e) {
  ExportRuling out;
  out.from = Date(e.At("from"));
  const Field status = e.At("status");
  const std::string s = status.String();
  if (s == "allowed") out.status = ExportStatus::kAllowed;
  else if (s == "licence") out.status = ExportStatus::kLicence;
  else if (s == "restricted") out.status = ExportStatus::kRestricted;
  else status.Fail("allowed, licence or restricted");
  out.rule = e.At("rule").String();
  out.rule_zh = ZhVariant(e, "rule");
  out.source = e.At("source").String();
  return out;
}

RegionPart ReadRegionPart(const Field& e) {
  RegionPart out;
  out.gpu = GpuId(e.At("gpu"));
  out.domestic = e.Has("domestic") && e.At("domestic").Bool();
  if (out.domestic == e.Has("history")) e.At("gpu").Fail("a part either domestic or with an export history");
  if (e.Has("history")) {
    for (const Field& h : e.At("history").Items()) {
      out.history.push_back(ReadRuling(h));
      if (out.history.size() > 1 && out.history.back().from <= out.history[out.history.size() - 2].from)
        h.At("from").Fail("a date after the ruling before it");
    }
    if (out.history.empty()) e.At("history").Fail("at least one ruling");
  }
  return out;
}

Region ReadRegion(const std::string& id, const Field& r) {
  Region out;
  out.id = id;
  out.source = r.At("source").String();
  out.note = r.At("note").String();
  out.note_zh = ZhVariant(r, "note");
  for (const Field& p : r.At("parts").Items()) out.parts.push_back(ReadRegionPart(p));
  if (r.Has("foreign_vendors"))
    for (const Field& v : r.At("foreign_vendors").Items()) out.foreign_vendors.push_back(GpuVendor(v));
  if (r.Has("reference_gpu")) out.reference_gpu = GpuId(r.At("reference_gpu"));
  if (r.Has("rental_market")) out.rental_market = r.At("rental_market").String();
  if (r.Has("options_per_kind")) out.options_per_kind = static_cast<int>(r.At("options_per_kind").Int({1, 10}));
  return out;
}

/// "desktop", "server" or "any"; true for desktop parts.
bool IsDesktop(const Field& field) {
  const std::string c = field.String();
  if (c != "desktop" && c != "server" && c != "any") field.Fail("desktop, server or any");
  return c == "desktop";
}

DriveSpec ReadDrive(const Field& d) {
  DriveSpec s;
  s.id = d.At("id").String();
  s.name = d.At("name").String();
  s.tier = d.At("tier").String();
  if (s.tier != "nvme" && s.tier != "u2" && s.tier != "sata" && s.tier != "hdd") d.At("tier").Fail("nvme, u2, sata or hdd");
  s.desktop = IsDesktop(d.At("class"));
  s.capacity_bytes = Positive(d, "capacity_tb", 1000) * kBytesPerTb;
  s.read_bytes_per_s = Positive(d, "read_gb_per_s", 1000) * kBytesPerGb;
  s.write_bytes_per_s = Positive(d, "write_gb_per_s", 1000) * kBytesPerGb;
  s.pcie_lanes = Count(d, "pcie_lanes", 16);
  s.watts = Positive(d, "watts", 1000);
  s.usd_per_tb = NumberOrNull(d.At("usd_per_tb"), kMaxUsd);
  s.source = d.At("source").String();
  return s;
}

NicSpec ReadNic(const Field& n) {
  NicSpec s{n.At("id").String(), n.At("name").String(), n.At("link").String(), Count(n, "pcie_lanes", 32),
            n.At("source").String()};
  const auto& links = LinkCatalog();
  if (std::none_of(links.begin(), links.end(), [&](const LinkSpec& l) { return l.id == s.link; }))
    n.At("link").Fail("a link id of data/links.json");
  return s;
}

PowerFigures ReadPower(const Field& p, const std::string& file) {
  PowerFigures out;
  for (const Field& t : p.At("gpu_transients").Items()) {
    const Field e = Named(t, file, "power.gpu_transients." + t.At("gpu").String());
    out.gpu_transients.push_back({GpuId(e.At("gpu")), Positive(e, "board_w", kMaxWatts), Positive(e, "peak_w", kMaxWatts),
                                  e.At("window").String(), e.At("source").String(), e.At("date").String()});
  }
  out.psu_excursion_ratio = Positive(p, "psu_excursion_ratio", 10);
  out.psu_excursion_window = p.At("psu_excursion_window").String();
  out.psu_excursion_source = p.At("psu_excursion_source").String();
  out.workstation_platform_w = Positive(p, "workstation_platform_w", kMaxWatts);
  out.workstation_platform_source = p.At("workstation_platform_source").String();
  for (const Field& s : p.At("systems").Items()) {
    const Field e = Named(s, file, "power.systems." + s.At("id").String());
    PowerSystem x;
    x.id = e.At("id").String();
    const std::string form = e.At("form").String();
    if (form != "pcie" && form != "baseboard") e.At("form").Fail("pcie or baseboard");
    x.pcie = form == "pcie";
    x.gpu_nvlink_gen = Count(e, "gpu_nvlink_gen", 10);
    x.gpus = Count(e, "gpus", 64);
    x.gpu_w = Positive(e, "gpu_w", kMaxWatts);
    x.cpus = Count(e, "cpus", 8);
    if (e.Has("cpu")) x.cpu = CpuId(e.At("cpu"));
    x.cpu_w = Positive(e, "cpu_w", kMaxWatts);
    x.max_input_w = Positive(e, "max_input_w", kMaxWatts);
    if (e.Has("psus")) {
      x.psus = Count(e, "psus", 64);
      x.psu_w = Positive(e, "psu_w", kMaxWatts);
    }
    if (e.Has("psus_required")) x.psus_required = Count(e, "psus_required", x.psus);
    x.source = e.At("source").String();
    x.date = e.At("date").String();
    if (x.gpus < 1 || x.max_input_w <= x.gpus * x.gpu_w + x.cpus * x.cpu_w)
      e.At("max_input_w").Fail("more than the system's GPUs and CPUs draw");
    out.systems.push_back(std::move(x));
  }
  if (out.systems.empty()) p.At("systems").Fail("at least one system");
  return out;
}

PsuFigures ReadPsu(const Field& p) {
  PsuFigures out;
  out.desktop_ratings_w = Numbers(p.At("desktop_ratings_w"), 0, kMaxWatts);
  out.server_ratings_w = Numbers(p.At("server_ratings_w"), 0, kMaxWatts);
  out.desktop_source = p.At("desktop_source").String();
  out.server_source = p.At("server_source").String();
  const Field eff = p.At("efficiency");
  out.load = Numbers(eff.At("load"), 0, 1);
  out.platinum = Numbers(eff.At("platinum"), 0, 1);
  out.efficiency_source = eff.At("source").String();
  if (!std::is_sorted(out.load.begin(), out.load.end())) eff.At("load").Fail("load fractions in ascending order");
  if (out.platinum.size() != out.load.size()) eff.At("platinum").Fail("one efficiency per load fraction");
  return out;
}

ElectricityTariff ReadTariff(const Field& t, const std::map<std::string, std::string>& sources) {
  t.CheckKeys({"per_kwh", "currency", "source", "date"});
  ElectricityTariff out;
  out.currency = &CatalogCurrency(t.At("currency"));
  // Industrial tariffs run 0.05-0.30 USD per kWh; the bound leaves room for any catalog currency.
  out.per_kwh = Positive(t, "per_kwh", 50);
  out.usd_per_kwh = ToUsd(out.per_kwh, *out.currency);
  out.source = t.At("source").String();
  const auto text = sources.find(out.source);
  if (text == sources.end()) t.At("source").Fail("a key of the file's sources");
  out.source_text = text->second;
  out.date = t.At("date").String();
  return out;
}

FacilityFigures ReadFacility(const Field& f, const std::map<std::string, std::string>& sources) {
  FacilityFigures out;
  out.pue = f.At("pue").Number(1, 3, true);
  out.pue_source = f.At("pue_source").String();
  out.pue_date = f.At("pue_date").String();
  out.colocation_usd_per_kw_month = Positive(f, "colocation_usd_per_kw_month", 10000);
  out.colocation_source = f.At("colocation_source").String();
  out.colocation_date = f.At("colocation_date").String();
  for (const auto& [region, tariff] : f.At("electricity").Members()) out.electricity[region] = ReadTariff(tariff, sources);
  if (!out.electricity.contains("us")) f.At("electricity").Fail("a tariff for region us (it stands in for others)");
  return out;
}

PurchasePrices ReadPurchase(const Field& p, const std::string& file) {
  PurchasePrices out;
  for (const Field& g : p.At("gpus").Items()) {
    const Field e = Named(g, file, "purchase.gpus." + g.At("gpu").String());
    out.gpus.push_back(
        {GpuId(e.At("gpu")), PurchaseUsd(e), e.At("source").String(), e.At("date").String(), MarketOf(e)});
  }
  for (const Field& s : p.At("systems").Items()) {
    const Field e = Named(s, file, "purchase.systems." + s.At("id").String());
    out.systems.push_back(ReadSystemPrice(e));
  }
  return out;
}

HostFigures ReadHost(const Field& h) {
  return {Count(h, "loader_workers_per_gpu", 64), h.At("loader_source").String(), Positive(h, "prefetch_factor", 64),
          h.At("prefetch_source").String(),       Positive(h, "process_gb_per_gpu", 1024), h.At("process_source").String()};
}

CpuSpec ReadCpu(const Field& c) {
  CpuSpec s;
  s.id = c.At("id").String();
  s.name = c.At("name").String();
  s.vendor = c.At("vendor").String();
  if (auto aliases = c.Get("aliases")) s.aliases = Strings(*aliases);
  s.on_module = c.At("class").String() == "module";
  if (!s.on_module) s.desktop = IsDesktop(c.At("class"));
  s.cores = Count(c, "cores", 1024);
  s.threads = Count(c, "threads", 2048);
  s.pcie_gen = Count(c, "pcie_gen", 7);
  s.pcie_lanes = Count(c, "usable_pcie_lanes", 1024);
  s.memory_type = c.At("memory_type").String();
  const bool soldered = s.on_module && s.memory_type.rfind("LPDDR5", 0) == 0;
  if (!soldered && s.memory_type.rfind("DDR4", 0) != 0 && s.memory_type.rfind("DDR5", 0) != 0)
    c.At("memory_type").Fail("DDR4 or DDR5 (LPDDR5 on a module CPU), optionally with its speed");
  s.memory_channels = Count(c, "memory_channels", 32);
  s.max_memory_bytes = Positive(c, "max_memory_gb", 1e6) * kBytesPerGb;
  s.max_sockets = static_cast<int>(c.At("max_sockets").Int({1, 72}));
  s.tdp_w = Positive(c, "tdp_w", kMaxWatts);
  s.price_usd = NumberOrNull(c.At("price_usd"), kMaxUsd);
  s.source = c.At("source").String();
  s.date = c.At("date").String();
  if (s.cores < 1 || s.memory_channels < 1) c.Fail("a CPU with cores and memory channels");
  return s;
}

}  // namespace

PartsCatalog LoadParts(std::string_view text, std::string_view file, const std::vector<UserCatalog>& overlays) {
  const CatalogDocument doc(text, file, overlays);
  const Field root = doc.Root();
  const std::string& name = doc.file();
  PartsCatalog c;
  for (const auto& [key, text_field] : root.At("sources").Members()) c.sources[key] = text_field.String();
  const Field dimms = root.At("dimms");
  for (double gb : Numbers(dimms.At("ddr4_gb"), 0, 1e4)) c.dimms.ddr4_bytes.push_back(gb * kBytesPerGb);
  for (double gb : Numbers(dimms.At("ddr5_gb"), 0, 1e4)) c.dimms.ddr5_bytes.push_back(gb * kBytesPerGb);
  c.dimms.source = dimms.At("source").String();
  const Field ram = root.At("ram_price");
  c.ram_price = {Positive(ram, "server_usd_per_gb", 1e4), Positive(ram, "desktop_usd_per_gb", 1e4),
                 ram.At("source").String(), ram.At("date").String()};
  for (const Field& d : doc.Entries("drives")) c.drives.push_back(ReadDrive(d));
  for (const Field& n : doc.Entries("nics")) c.nics.push_back(ReadNic(n));
  c.psu = ReadPsu(root.At("psu"));
  c.power = ReadPower(root.At("power"), name);
  const Field cool = root.At("cooling");
  c.cooling = {Positive(cool, "air_rack_kw_max", 1000), cool.At("air_rack_source").String(),
               Positive(cool, "liquid_gpu_w_min", kMaxWatts), cool.At("liquid_gpu_source").String(),
               Positive(cool, "btu_per_h_per_w", 10),   cool.At("btu_source").String()};
  c.facility = ReadFacility(root.At("facility"), c.sources);
  c.purchase = ReadPurchase(root.At("purchase"), name);
  for (const Field& b : root.At("boards").Items()) c.boards.push_back(ReadBoard(Named(b, name, "boards." + b.At("name").String())));
  for (const Field& s : root.At("system_prices").Items())
    c.system_prices.push_back(ReadSystemPrice(Named(s, name, "system_prices." + s.At("id").String())));
  const Field wall = root.At("wall_circuits");
  c.circuits = {Positive(wall, "us_120v_15a_w", kMaxWatts), wall.At("us_continuous_fraction").Number(0, 1, true),
                wall.At("us_source").String(), Positive(wall, "eu_230v_16a_w", kMaxWatts), wall.At("eu_source").String()};
  c.card_slots = ReadCardSlots(root.At("card_slots"), name);
  const Field cloud = root.At("cloud");
  c.cloud = {cloud.At("reserved_1y_discount").Number(0, 1, true), cloud.At("reserved_source").String(),
             cloud.At("reserved_date").String()};
  for (const auto& [id, region] : root.At("regions").Members()) c.regions.push_back(ReadRegion(id, region));
  // Keys by name, not a structured binding: clang before 16 (the fuzz build's) cannot capture one in a lambda.
  for (const auto& tariff : c.facility.electricity) {
    const std::string& id = tariff.first;
    if (std::none_of(c.regions.begin(), c.regions.end(), [&](const Region& r) { return r.id == id; }))
      root.At("facility").At("electricity").At(id).Fail("a tariff for a region of 'regions'");
  }
  const Field rel = root.At("reliability");
  c.reliability = {Positive(rel, "interruptions", 1e9),     Positive(rel, "days", 1e5),
                   Positive(rel, "gpus", 1e9),              rel.At("source").String(),
                   rel.At("date").String(),                 {},
                   Positive(rel, "restart_overhead_s", 1e6), rel.At("restart_source").String()};
  if (const auto by = rel.Get("by_generation")) {
    for (const auto& [generation_name, m] : by->Members()) {
      const auto generation = ParseGpuGeneration(generation_name);
      if (!generation) m.Fail("a generation of data/gpus.json");
      c.reliability.by_generation[static_cast<int>(*generation)] = {Positive(m, "mttf_h", 1e6), Positive(m, "gpus", 1e9),
                                                                     m.At("source").String(), m.At("date").String()};
    }
  }
  c.host = ReadHost(root.At("host"));
  return c;
}

std::vector<CpuSpec> LoadCpus(std::string_view text, std::string_view file, const std::vector<UserCatalog>& overlays) {
  const CatalogDocument doc(text, file, overlays);
  std::vector<CpuSpec> out;
  for (const Field& c : doc.Entries("cpus")) out.push_back(ReadCpu(c));
  return out;
}

const std::string& PartsCatalog::SourceText(const std::string& key) const {
  auto it = sources.find(key);
  return it == sources.end() ? key : it->second;
}

const Region* PartsCatalog::FindRegion(std::string_view id) const {
  for (const auto& r : regions)
    if (r.id == id) return &r;
  return nullptr;
}

const RegionPart* PartsCatalog::FindPart(const Region& region, std::string_view gpu) {
  for (const auto& p : region.parts)
    if (p.gpu == gpu) return &p;
  return nullptr;
}

const ExportRuling* RegionPart::On(const std::string& date) const {
  const ExportRuling* in_force = nullptr;
  for (const auto& h : history)
    if (h.from <= date) in_force = &h;
  return in_force;
}

bool IsIsoDate(std::string_view s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  for (size_t i = 0; i < s.size(); ++i)
    if (i != 4 && i != 7 && !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  const int month = (s[5] - '0') * 10 + (s[6] - '0'), day = (s[8] - '0') * 10 + (s[9] - '0');
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

const char* ToString(ExportStatus s) {
  switch (s) {
    case ExportStatus::kAllowed: return "allowed";
    case ExportStatus::kLicence: return "licence";
    case ExportStatus::kRestricted: return "restricted";
  }
  return "allowed";
}

const PartsCatalog& Parts() {
  static const PartsCatalog catalog = LoadParts(CatalogText("parts.json"), "parts.json");
  return catalog;
}

const std::vector<CpuSpec>& CpuCatalog() {
  static const std::vector<CpuSpec> catalog = LoadCpus(CatalogText("cpus.json"), "cpus.json");
  return catalog;
}

const CpuSpec& FindCpu(const std::string& name) { return FindByName(CpuCatalog(), name, "cpu"); }
const std::vector<DriveSpec>& DriveCatalog() { return Parts().drives; }
const DriveSpec& FindDrive(const std::string& name) { return FindByName(DriveCatalog(), name, "storage.drive"); }
const std::vector<NicSpec>& NicCatalog() { return Parts().nics; }

}  // namespace trainplan
