#include "amg/grid_stats.h"

#include <cstdio>

namespace jaxamg {

std::string format_grid_stats(const std::vector<GridLevelStats>& levels) {
  // Widths: LVL 15 (index in 12 + "(D)"), ROWS 13, NNZ 18, PARTS 7,
  // SPRSTY 10 (3 significant digits), Mem 15 (3 significant digits).
  const char* rule_top = "        ----------------------------------------------------------------------\n";
  const char* rule = "         ----------------------------------------------------------------------\n";
  constexpr double kGB = 1024.0 * 1024.0 * 1024.0;
  std::string out = "AMG Grid:\n";
  char line[256];
  std::snprintf(line, sizeof line, "         Number of Levels: %zu\n", levels.size());
  out += line;
  std::snprintf(line, sizeof line, "%15s%13s%18s%7s%10s%15s\n", "LVL", "ROWS", "NNZ", "PARTS",
                "SPRSTY", "Mem (GB)");
  out += line;
  out += rule_top;
  // Sizes in float, summed in float, as AmgX prints them.
  double total_rows = 0, total_nnz = 0;
  float total_gb = 0;
  for (std::size_t l = 0; l < levels.size(); ++l) {
    const GridLevelStats& s = levels[l];
    const double rows = static_cast<double>(s.rows);
    const double sparsity = s.rows > 0 ? static_cast<double>(s.nnz) / (rows * rows) : 0.0;
    const float gb = static_cast<float>(static_cast<double>(s.bytes) / kGB);
    std::snprintf(line, sizeof line, "%12zu(D)%13d%18d%7d%10.3g%15.3g\n", l,
                  static_cast<int>(s.rows), static_cast<int>(s.nnz), s.parts, sparsity,
                  static_cast<double>(gb));
    out += line;
    total_rows += rows;
    total_nnz += static_cast<double>(s.nnz);
    total_gb += gb;
  }
  out += rule;
  const double rows0 = levels.empty() ? 0.0 : static_cast<double>(levels[0].rows);
  const double nnz0 = levels.empty() ? 0.0 : static_cast<double>(levels[0].nnz);
  std::snprintf(line, sizeof line, "         Grid Complexity: %g\n",
                rows0 > 0 ? total_rows / rows0 : 0.0);
  out += line;
  std::snprintf(line, sizeof line, "         Operator Complexity: %g\n",
                nnz0 > 0 ? total_nnz / nnz0 : 0.0);
  out += line;
  std::snprintf(line, sizeof line, "         Total Memory Usage: %g GB\n",
                static_cast<double>(total_gb));
  out += line;
  out += rule;
  return out;
}

bool wants_grid_stats(const Config& cfg, const std::string& scope) {
  return cfg.get_int("print_grid_stats", scope) != 0 && cfg.get_int("verbosity_level", scope) >= 3;
}

}  // namespace jaxamg
