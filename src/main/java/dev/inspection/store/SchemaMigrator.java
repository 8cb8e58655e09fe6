package dev.inspection.store;

import java.net.ConnectException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationState;
import org.flywaydb.core.api.output.MigrateResult;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.database.postgresql.PostgreSQLConfigurationExtension;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Flyway over JDBC for one schema. BLOCKING: call it on a worker thread ({@link Migrations} does). {@link #migrate}
 * holds a session advisory lock keyed by the schema (the key the runner before Flyway used, so an old and a new
 * node never migrate at once), hands a schema migrated by that runner over to Flyway with a baseline
 * ({@link LegacyBaseline}) and applies what is pending. {@link #checkCurrent} only reads: for nodes without DDL rights.
 */
public final class SchemaMigrator {
  /** Where the jar's migrations are. */
  public static final String LOCATION = "classpath:db/migration";
  /** Flyway's history table in each schema. */
  public static final String HISTORY = "flyway_schema_history";

  private final PgOptions pg;
  private final List<String> locations;

  public SchemaMigrator(PgOptions pg, List<String> locations) {
    this.pg = pg;
    this.locations = List.copyOf(locations);
  }

  /** Applies the pending migrations; returns how many. */
  public int migrate() {
    DataSource ds = dataSource();
    try (Connection c = ds.getConnection()) {
      lock(c, "pg_advisory_lock");
      try {
        String baseline = legacyBaseline(c);
        FluentConfiguration conf = configure(ds);
        if (baseline != null) {
          conf.baselineOnMigrate(true).baselineVersion(baseline).baselineDescription("schema_migrations of the runner before Flyway");
        }
        MigrateResult r = conf.load().migrate();
        return r.migrationsExecuted;
      } finally {
        lock(c, "pg_advisory_unlock");
      }
    } catch (SQLException e) {
      throw classify(e);
    } catch (RuntimeException e) {
      throw classify(e);
    }
  }

  /** Returns 0 when the schema is current; otherwise fails with what to do. Needs only read rights. */
  public int checkCurrent() {
    DataSource ds = dataSource();
    try (Connection c = ds.getConnection()) {
      boolean[] tables = tables(c);
      if (tables[0] && !tables[1]) {
        throw new IllegalStateException("schema " + pg.schema() + " was migrated by the runner before Flyway and pg.migrate=false:"
            + " run `java -jar node.jar migrate` once with a role that may change the schema (README \"Upgrading\")");
      }
      MigrationInfo[] all = configure(ds).load().info().all();
      List<MigrationInfo> failed = Arrays.stream(all).filter(i -> i.getState() == MigrationState.FAILED).toList();
      List<MigrationInfo> pending = Arrays.stream(all).filter(i -> i.getState() == MigrationState.PENDING).toList();
      if (!failed.isEmpty()) {
        throw new IllegalStateException("schema " + pg.schema() + ": migration V" + failed.get(0).getVersion() + " failed;"
            + " fix it and run `java -jar node.jar migrate` (README \"Upgrading\")");
      }
      if (!pending.isEmpty()) {
        throw new IllegalStateException("schema " + pg.schema() + " is not current and pg.migrate=false: " + pending.size()
            + " pending migration(s) (" + pending.stream().map(i -> "V" + i.getVersion()).collect(Collectors.joining(", ")) + ");"
            + " run `java -jar node.jar migrate` with a role that may change the schema first (README \"Upgrading\")");
      }
      return 0;
    } catch (SQLException e) {
      throw classify(e);
    } catch (RuntimeException e) {
      throw classify(e);
    }
  }

  private FluentConfiguration configure(DataSource ds) {
    FluentConfiguration conf = Flyway.configure(SchemaMigrator.class.getClassLoader())
        .dataSource(ds)
        .schemas(pg.schema())
        .defaultSchema(pg.schema())
        .createSchemas(true)
        .table(HISTORY)
        .locations(locations.toArray(String[]::new))
        // the files are plain SQL: ${...} in a function body stays as written, as with the runner before Flyway
        .placeholderReplacement(false)
        .connectRetries(0);
    // Flyway's lock as a session lock: a transaction-scoped one keeps a transaction open that CREATE INDEX CONCURRENTLY waits for
    conf.getConfigurationExtension(PostgreSQLConfigurationExtension.class).setTransactionalLock(false);
    return conf;
  }

  /** The baseline version when the schema has the old runner's table and not yet Flyway's, else null. */
  private String legacyBaseline(Connection c) throws SQLException {
    boolean[] tables = tables(c);
    if (!tables[0] || tables[1]) return null;
    Map<String, String> applied = new HashMap<>();
    try (PreparedStatement st = c.prepareStatement("SELECT version, checksum FROM " + pg.schema() + ".schema_migrations");
         ResultSet rs = st.executeQuery()) {
      while (rs.next()) applied.put(rs.getString(1), rs.getString(2));
    }
    List<LegacyBaseline.File> files = Migrations.FILES.stream()
        .map(f -> new LegacyBaseline.File(f.substring(0, f.indexOf("__")), Migrations.sha256(Migrations.read(f)))).toList();
    return LegacyBaseline.baselineVersion(files, applied, pg.schema());
  }

  /** [the old runner's table exists, Flyway's exists]. */
  private boolean[] tables(Connection c) throws SQLException {
    try (PreparedStatement st = c.prepareStatement("SELECT to_regclass(? || '.schema_migrations') IS NOT NULL, to_regclass(? || '." + HISTORY + "') IS NOT NULL")) {
      st.setString(1, pg.schema());
      st.setString(2, pg.schema());
      try (ResultSet rs = st.executeQuery()) {
        rs.next();
        return new boolean[] {rs.getBoolean(1), rs.getBoolean(2)};
      }
    }
  }

  private void lock(Connection c, String function) throws SQLException {
    try (PreparedStatement st = c.prepareStatement("SELECT " + function + "(hashtext(?))")) {
      st.setString(1, "inspection.migrate." + pg.schema());
      st.executeQuery().close();
    }
  }

  /** A JDBC data source with the node's pg.* settings (TLS as in {@link Db}). */
  DataSource dataSource() {
    PGSimpleDataSource ds = new PGSimpleDataSource();
    ds.setServerNames(new String[] {pg.host()});
    ds.setPortNumbers(new int[] {pg.port()});
    ds.setDatabaseName(pg.database());
    ds.setUser(pg.user());
    ds.setPassword(pg.password());
    ds.setApplicationName(pg.applicationName() + "-migrate");
    ds.setConnectTimeout(10);
    ds.setSslMode(pg.sslMode());
    if (!pg.sslMode().equals("disable")) {
      if (!pg.tlsCa().isEmpty()) {
        ds.setSslRootCert(pg.tlsCa());
      } else if (!pg.sslMode().equals("require")) {
        ds.setSslfactory("org.postgresql.ssl.DefaultJavaSSLFactory"); // the JVM's trust store, as the pools use
      }
    }
    return ds;
  }

  /**
   * PostgreSQL unreachable (connection errors, server shutting down) stays as it is: the caller retries. Anything
   * else (a changed file, a failing migration, a pending one) is an {@link IllegalStateException}: waiting does not fix it.
   */
  static RuntimeException classify(Exception e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof ConnectException) return asRuntime(e);
      if (t instanceof SQLException s && s.getSQLState() != null && (s.getSQLState().startsWith("08") || s.getSQLState().startsWith("57P0"))) {
        return asRuntime(e);
      }
    }
    if (e instanceof IllegalStateException i) return i;
    return new IllegalStateException(e.getMessage(), e);
  }

  private static RuntimeException asRuntime(Exception e) {
    return e instanceof RuntimeException r && !(r instanceof IllegalStateException) ? r : new RuntimeException(e.getMessage(), e);
  }
}
