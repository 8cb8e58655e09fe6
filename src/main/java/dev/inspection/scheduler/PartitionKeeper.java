package dev.inspection.scheduler;

import io.vertx.core.Future;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Retention by partition (seed 000 §6.4, INV-20): day partitions of history (per retention class), alert
 * events and rollups are created {@code aheadDays} ahead and dropped whole once past their retention —
 * never a DELETE. Run by the leader only (at election and then periodically), inside its term-fenced
 * transaction. {@link #plan} is pure and unit-tested; {@link #apply} runs the DDL.
 */
public final class PartitionKeeper {
  static final String EXISTING = """
      SELECT c.relname, p.relname FROM pg_inherits i
      JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
      WHERE c.relnamespace = current_schema()::regnamespace AND p.relname = ANY($1::text[])""";
  private static final DateTimeFormatter DAY = DateTimeFormatter.BASIC_ISO_DATE;
  private static final Pattern SUFFIX = Pattern.compile("_(\\d{8})$");

  /** A partitioned table, how its day bounds are written, and how many days it keeps. */
  public record Parent(String table, boolean epochMillisKey, int retentionDays) {
    String bound(LocalDate d) {
      return epochMillisKey ? Long.toString(d.atStartOfDay(ZoneOffset.UTC).toInstant().toEpochMilli())
          : "'" + d.atStartOfDay(ZoneOffset.UTC).toOffsetDateTime() + "'";
    }
  }

  /** What to do. */
  public record Plan(List<String> create, List<String> drop) {}

  /** Settings from configuration. */
  public record Settings(int historyDaysHigh, int historyDaysNormal, int alertDays, int rollupDays, int aheadDays) {
    List<Parent> parents() {
      return List.of(new Parent("device_status_history_c1", true, historyDaysHigh), new Parent("device_status_history_c2", true, historyDaysNormal),
          new Parent("alert_event", true, alertDays), new Parent("device_status_rollup_1m", false, rollupDays));
    }
  }

  private final Settings settings;
  private final List<String> failed = new ArrayList<>();

  /** Partitions the last run could not create, with PostgreSQL's reason. */
  public List<String> failed() {
    return List.copyOf(failed);
  }

  public PartitionKeeper(Settings settings) {
    this.settings = settings;
  }

  /**
   * The DDL for one day: create the partitions of [today - 1, today + ahead] that are missing, drop those
   * whose whole day is older than the retention. {@code existing} are partition table names.
   */
  public static Plan plan(List<Parent> parents, Set<String> existing, LocalDate today, int aheadDays) {
    List<String> create = new ArrayList<>();
    List<String> drop = new ArrayList<>();
    for (Parent p : parents) {
      for (LocalDate d = today.minusDays(1); !d.isAfter(today.plusDays(aheadDays)); d = d.plusDays(1)) {
        String name = p.table() + "_" + d.format(DAY);
        if (!existing.contains(name)) {
          create.add("CREATE TABLE " + name + " PARTITION OF " + p.table() + " FOR VALUES FROM (" + p.bound(d) + ") TO (" + p.bound(d.plusDays(1)) + ")");
        }
      }
      LocalDate oldestKept = today.minusDays(p.retentionDays());
      for (String name : existing) {
        if (!name.startsWith(p.table() + "_")) continue;
        Matcher m = SUFFIX.matcher(name);
        if (!m.find() || !name.equals(p.table() + "_" + m.group(1))) continue; // e.g. the default partition
        LocalDate day = LocalDate.parse(m.group(1), DAY);
        if (day.isBefore(oldestKept)) drop.add("DROP TABLE " + name);
      }
    }
    drop.sort(null);
    return new Plan(create, drop);
  }

  /** Reads the existing partitions and runs the plan on {@code c} (the leader's fenced transaction). */
  public Future<Plan> apply(SqlConnection c, LocalDate today) {
    List<Parent> parents = settings.parents();
    String[] names = parents.stream().map(Parent::table).toArray(String[]::new);
    return c.preparedQuery(EXISTING).execute(Tuple.of((Object) names)).compose(rows -> {
      Set<String> existing = new HashSet<>();
      for (Row r : rows) existing.add(r.getString(0));
      Plan plan = plan(parents, existing, today, settings.aheadDays());
      failed.clear();
      Future<Void> chain = Future.succeededFuture();
      for (String ddl : plan.create()) {
        // a day whose rows already sit in the default partition cannot get its own: say so, go on with the rest
        chain = chain.compose(v -> c.query("SAVEPOINT keeper").execute()).compose(v -> c.query(ddl).execute()
            .<Void>mapEmpty()
            .recover(e -> {
              failed.add(ddl.substring("CREATE TABLE ".length(), ddl.indexOf(' ', "CREATE TABLE ".length())) + ": " + e.getMessage());
              return c.query("ROLLBACK TO SAVEPOINT keeper").execute().mapEmpty();
            }));
      }
      for (String ddl : plan.drop()) chain = chain.compose(v -> c.query(ddl).execute().mapEmpty());
      return chain.map(plan);
    });
  }
}
