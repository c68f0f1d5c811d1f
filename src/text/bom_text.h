#pragma once
// The sentences that explain a bill of materials (core/bom.h), from its reason codes and figures.
#include <string>

#include "core/bom.h"

namespace trainplan {

/// Where one derivation line's amount comes from.
std::string TermWhy(const NodeBom& bom, const BomTerm& term);
std::string CpuWhy(const NodeBom& bom);
std::string RamWhy(const NodeBom& bom);
std::string TierWhy(const NodeBom& bom, const StorageTier& tier);
std::string NetworkWhy(const NodeBom& bom);
std::string PowerWhy(const NodeBom& bom);
/// Air while a rack stays within what air handles, liquid beyond, with the heat the room must remove.
std::string CoolingWhy(const NodeBom& bom);
/// What the build asks of its site: a partly used baseboard, the wall circuit, the cards' slot widths.
std::string WarningText(const NodeBom& bom, const BomWarning& warning);
/// The platform the node is, as bought: "DGX H100", "HGX H100/H200 4-GPU baseboard server", "PCIe GPU server",
/// "workstation".
std::string PlatformText(const NodeBom& bom);
/// "no redundancy", "N+1", "N+N".
std::string RedundancyText(const std::string& redundancy);

/// `bom` with every sentence DeriveBom leaves empty written, for the renderers and writers that carry them.
NodeBom WithSentences(NodeBom bom);

}  // namespace trainplan
