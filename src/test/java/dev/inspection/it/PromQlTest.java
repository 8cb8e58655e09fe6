package dev.inspection.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PromQlTest {
  @Test
  void metricNamesLeaveOutFunctionsLabelsRangesAndKeywords() {
    assertEquals(Set.of("worker_committed_total", "worker_slots_held", "queue_backlog_messages"), PromQl.metricNames(
        "(sum by (node) (rate(worker_committed_total{x=\"a b\"}[5m])) == 0) and on (node) (max by (node) (worker_slots_held) > 0)"
            + " and on () (sum(max by (slot, priority) (queue_backlog_messages)) > 1e3)"));
    assertEquals(Set.of("worker_priority_lag_seconds_bucket"),
        PromQl.metricNames("histogram_quantile(0.99, sum by (le, priority) (rate(worker_priority_lag_seconds_bucket{priority=\"high\"}[5m]))) > 10"));
    assertEquals(Set.of("up"), PromQl.metricNames("up{job=\"inspection\"} == 0"));
  }

  @Test
  void expressionsReadsPlainAndBlockScalars() {
    String yaml = """
        groups:
          - name: g
            rules:
              - alert: A
                expr: up == 0
                for: 1m
              - alert: B
                expr: |
                  sum(a)
                    and on () b
                for: 5m
        """;
    assertEquals(List.of("up == 0", "sum(a) and on () b"), PromQl.expressions(yaml));
  }
}
