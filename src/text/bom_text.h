#pragma once
// The sentences that explain a bill of materials (core/bom.h), from its reason codes and figures, in English or
// Chinese; the JSON writers take the English ones.
#include <string>
#include <vector>

#include "core/bom.h"
#include "text/i18n.h"

namespace trainplan {

/// Where one derivation line's amount comes from.
std::string TermWhy(const NodeBom& bom, const BomTerm& term, Lang lang = Lang::kEn);
std::string CpuWhy(const NodeBom& bom, Lang lang = Lang::kEn);
std::string RamWhy(const NodeBom& bom, Lang lang = Lang::kEn);
std::string TierWhy(const NodeBom& bom, const StorageTier& tier, Lang lang = Lang::kEn);
/// What a storage tier is for: "local NVMe (hot)", "bulk HDD, SATA SSD or object store (whole job)".
std::string TierRoleText(const NodeBom& bom, const StorageTier& tier, Lang lang = Lang::kEn);
std::string NetworkWhy(const NodeBom& bom, Lang lang = Lang::kEn);
std::string PowerWhy(const NodeBom& bom, Lang lang = Lang::kEn);
/// Air while a rack stays within what air handles, liquid beyond, with the heat the room must remove.
std::string CoolingWhy(const NodeBom& bom, Lang lang = Lang::kEn);
/// "air" or "liquid" (a CoolingPlan's or a build's kind) in `lang`.
std::string CoolingKindText(const std::string& kind, Lang lang = Lang::kEn);
/// "workstation" or "server" (NodeBom::node_class) in `lang`.
std::string NodeClassText(const std::string& node_class, Lang lang = Lang::kEn);
/// What the build asks of its site: a partly used baseboard, the wall circuit, the cards' slot widths.
std::string WarningText(const NodeBom& bom, const BomWarning& warning, Lang lang = Lang::kEn);
/// The platform the node is, as bought: "DGX H100", "HGX H100/H200 4-GPU baseboard server", "PCIe GPU server",
/// "workstation".
std::string PlatformText(const NodeBom& bom, Lang lang = Lang::kEn);
/// A part as bought, in a price line or a list of unpriced parts: "2 x 64 GB RAM", "PCIe GPU server for 4 cards
/// (board, chassis, PSUs, fans)". JSON writers take the English.
std::string PartText(const BomPart& part, Lang lang = Lang::kEn);
/// Parts named one after another, joined with `separator` (the language's comma unless given).
std::string PartsText(const std::vector<BomPart>& parts, Lang lang = Lang::kEn, const std::string& separator = "");
/// "no redundancy", "N+1", "N+N".
std::string RedundancyText(const std::string& redundancy, Lang lang = Lang::kEn);

/// `bom` with every sentence DeriveBom leaves empty written in `lang`, for the renderers and writers that carry them.
NodeBom WithSentences(NodeBom bom, Lang lang = Lang::kEn);

}  // namespace trainplan
