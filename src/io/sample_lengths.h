#pragma once
// Sample lengths in tokens from a user's file, as the histogram training.sample_lengths takes. The forms
// (docs/scenario.md, "Sample lengths from a file"):
//   - a plain list: one length per line;
//   - a histogram: `length count` per line (space, tab or comma between; counts may be fractions);
//   - JSON Lines: one record per line, a number, or an object with `input_ids` (its length), `length` (HF
//     Trainer's length_column_name) or `num_tokens`;
//   - JSON: an array of such records.
// Blank lines and lines starting with '#' are skipped. Lengths are whole tokens from 1 to the longest seq_len;
// lengths over the job's seq_len are kept (the trainer truncates those samples, as TRL's SFTTrainer does).
#include <istream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainplan {

/// [tokens, fraction] bins, fractions summing to 1, at most kMaxSampleLengthBins of them.
using SampleLengthHistogram = std::vector<std::pair<double, double>>;

/// More distinct lengths than this are merged into equal-width bins, each at its samples' mean length, the
/// longest length in a bin of its own: the mean and the longest stay exact, and the padding of a micro-batch
/// moves by at most a bin's width.
inline constexpr size_t kMaxSampleLengthBins = 128;

/// Reads the lengths from `in`; `field` (the flag or key) and `name` (the file) label every error, an
/// InputError naming the line, its value and the forms allowed.
SampleLengthHistogram ReadSampleLengths(std::istream& in, const std::string& field, const std::string& name);
SampleLengthHistogram SampleLengthsFromText(std::string_view text, const std::string& field, const std::string& name);
/// An unreadable file fails naming `field` and the path.
SampleLengthHistogram SampleLengthsFromFile(const std::string& path, const std::string& field);

}  // namespace trainplan
