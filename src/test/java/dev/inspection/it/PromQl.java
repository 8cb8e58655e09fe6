package dev.inspection.it;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Just enough PromQL reading for the checks of PrometheusIT: the expressions of a rules file and the metric names in one. */
final class PromQl {
  private static final Set<String> KEYWORDS = Set.of("and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left",
      "group_right", "inf", "nan");
  private static final Pattern IDENT = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\s*\\()?");

  private PromQl() {}

  /** The {@code expr:} values of a Prometheus rules file, block scalars ({@code expr: |}) included. */
  static List<String> expressions(String yaml) {
    List<String> out = new ArrayList<>();
    String[] lines = yaml.split("\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String t = lines[i].trim();
      if (!t.startsWith("expr:")) continue;
      String v = t.substring(5).trim();
      if (!v.equals("|") && !v.equals(">")) {
        out.add(v);
        continue;
      }
      int indent = lines[i].indexOf("expr:");
      StringBuilder b = new StringBuilder();
      while (i + 1 < lines.length && (lines[i + 1].isBlank() || lines[i + 1].length() - lines[i + 1].stripLeading().length() > indent)) {
        b.append(lines[++i].trim()).append(' ');
      }
      out.add(b.toString().trim());
    }
    return out;
  }

  /** Metric names in an expression: what is left once strings, label matchers, ranges, grouping labels, functions and keywords go. */
  static Set<String> metricNames(String expr) {
    String s = expr.replaceAll("\"(\\\\.|[^\"\\\\])*\"", "\"\"")
        .replaceAll("\\{[^}]*}", " ")
        .replaceAll("\\[[^]]*]", " ")
        .replaceAll("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", " ");
    Set<String> out = new TreeSet<>();
    Matcher m = IDENT.matcher(s);
    while (m.find()) {
      if (m.start() > 0 && Character.isDigit(s.charAt(m.start() - 1))) continue; // the e of 1e3, the m of 5m
      if (m.group(2) != null || KEYWORDS.contains(m.group(1).toLowerCase())) continue;
      out.add(m.group(1));
    }
    return out;
  }
}
