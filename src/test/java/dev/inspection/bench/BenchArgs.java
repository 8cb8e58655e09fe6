package dev.inspection.bench;

import java.util.Map;
import java.util.TreeMap;

/** A benchmark's {@code --key=value} flags over its defaults; an unknown or malformed one ends it (exit 2) naming the known ones. */
final class BenchArgs {
  private BenchArgs() {}

  static Map<String, String> parse(String bench, String[] args, Map<String, String> defaults) {
    Map<String, String> opt = new TreeMap<>(defaults);
    for (String a : args) {
      int eq = a.indexOf('=');
      if (!a.startsWith("--") || eq < 0 || !opt.containsKey(a.substring(2, eq))) {
        StringBuilder known = new StringBuilder();
        defaults.keySet().stream().sorted().forEach(k -> known.append(" --").append(k).append('=').append(defaults.get(k)));
        System.err.println(bench + ": unknown argument '" + a + "'; known (with their defaults):" + known);
        System.exit(2);
      }
      opt.put(a.substring(2, eq), a.substring(eq + 1));
    }
    return opt;
  }
}
