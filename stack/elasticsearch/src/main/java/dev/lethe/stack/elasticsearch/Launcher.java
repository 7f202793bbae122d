package dev.lethe.stack.elasticsearch;

import org.elasticsearch.common.logging.LogConfigurator;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.env.Environment;
import org.elasticsearch.node.ClasspathNodeServiceProvider;
import org.elasticsearch.node.InternalSettingsPreparer;
import org.elasticsearch.node.Node;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.transport.netty4.Netty4Plugin;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Lethe local stack: runs one Elasticsearch node in this JVM, HTTP on 127.0.0.1 only.
 *
 * Usage: {@code Launcher --home DIR --http-port PORT [-E key=value ...]}
 *
 * Runs in the foreground; SIGTERM/SIGINT close the node cleanly. Data lives in DIR/data and survives
 * restarts. Prints one line {@code lethe-elasticsearch: started ...} to stdout once HTTP is serving.
 */
public final class Launcher {

    public static final String CLUSTER_NAME = "lethe-local";
    public static final String NODE_NAME = "lethe-local-node";

    private static final PrintStream OUT = System.out;
    private static final PrintStream ERR = System.err;

    private Launcher() {}

    public static void main(String[] args) {
        Path home = null;
        Integer httpPort = null;
        List<String[]> overrides = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--home" -> home = Path.of(requireValue(args, ++i, a)).toAbsolutePath().normalize();
                case "--http-port" -> httpPort = parsePort(requireValue(args, ++i, a));
                case "-E" -> overrides.add(splitOverride(requireValue(args, ++i, a)));
                case "-h", "--help" -> {
                    OUT.println("usage: run --home DIR --http-port PORT [-E key=value ...]");
                    System.exit(0);
                }
                default -> fail("unknown argument: " + a);
            }
        }
        if (home == null) fail("--home DIR is required");
        if (httpPort == null) fail("--http-port PORT is required");

        Path config = home.resolve("config");
        Path data = home.resolve("data");
        Path logs = home.resolve("logs");
        try {
            Files.createDirectories(config);
            Files.createDirectories(data);
            Files.createDirectories(logs);
        } catch (Exception e) {
            fail("cannot create directories under " + home + ": " + e);
        }

        String logLevel = System.getenv().getOrDefault("ES_LOG_LEVEL", "WARN");
        Settings.Builder sb = Settings.builder()
            .put("path.home", home.toString())
            .put("path.data", data.toString())
            .put("path.logs", logs.toString())
            .put("cluster.name", CLUSTER_NAME)
            .put("node.name", NODE_NAME)
            .put("discovery.type", "single-node")
            .put("network.host", "127.0.0.1")
            .put("http.port", httpPort)
            .put("transport.port", 0)
            // A developer disk that is >95% full would otherwise turn every index read-only.
            .put("cluster.routing.allocation.disk.threshold_enabled", false)
            .put("logger.level", logLevel)
            // Keep the start/stop lines of the node itself even at WARN.
            .put("logger.org.elasticsearch.node.Node", "INFO");
        for (String[] kv : overrides) {
            sb.put(kv[0], kv[1]);
        }
        Settings settings = sb.build();

        final Node node;
        try {
            LogConfigurator.configureWithoutConfig(settings);
            Environment env = InternalSettingsPreparer.prepareEnvironment(settings, Map.of(), config, () -> NODE_NAME);
            List<Class<? extends Plugin>> plugins = List.of(Netty4Plugin.class, RootEndpointPlugin.class, TestIndexSettingsPlugin.class);
            node = ClasspathNodeServiceProvider.newNode(env, plugins);
        } catch (Throwable t) {
            ERR.println("lethe-elasticsearch: failed to build the node");
            t.printStackTrace(ERR);
            System.exit(1);
            return;
        }

        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            long c0 = System.nanoTime();
            try {
                node.prepareForClose();
                long c1 = System.nanoTime();
                node.close();
                long c2 = System.nanoTime();
                if (node.awaitClose(10, TimeUnit.SECONDS) == false) {
                    ERR.println("lethe-elasticsearch: node did not close within 10s");
                }
                long c3 = System.nanoTime();
                ERR.println("lethe-elasticsearch: stopped in " + (c3 - c0) / 1000000 + " ms (prepare " + (c1 - c0) / 1000000
                    + ", close " + (c2 - c1) / 1000000 + ", await " + (c3 - c2) / 1000000 + ")");
            } catch (Throwable t) {
                ERR.println("lethe-elasticsearch: error while closing the node: " + t);
            } finally {
                stopped.countDown();
            }
        }, "lethe-es-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        // SIGTERM/SIGINT: run the shutdown hook and exit with status 0 (the JVM default would be 143/130).
        for (String sig : new String[] { "TERM", "INT" }) {
            try {
                sun.misc.Signal.handle(new sun.misc.Signal(sig), s -> System.exit(0));
            } catch (IllegalArgumentException e) {
                // signal not available on this platform: keep the JVM default
            }
        }

        long t0 = System.nanoTime();
        try {
            node.start();
        } catch (Throwable t) {
            ERR.println("lethe-elasticsearch: failed to start the node (is port " + httpPort + " free? is another node using " + data + "?)");
            t.printStackTrace(ERR);
            System.exit(1);
            return;
        }
        long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        OUT.println("lethe-elasticsearch: started http://127.0.0.1:" + httpPort + " home=" + home + " pid=" + ProcessHandle.current().pid() + " start_ms=" + ms);
        OUT.flush();

        // The node's threads are daemons; keep the JVM alive until the shutdown hook has run.
        while (true) {
            try {
                stopped.await();
                return;
            } catch (InterruptedException e) {
                // keep waiting
            }
        }
    }

    private static String requireValue(String[] args, int i, String flag) {
        if (i >= args.length) fail(flag + " needs a value");
        return args[i];
    }

    private static int parsePort(String s) {
        try {
            int p = Integer.parseInt(s);
            if (p < 1 || p > 65535) fail("--http-port out of range: " + s);
            return p;
        } catch (NumberFormatException e) {
            fail("--http-port is not a number: " + s);
            return -1;
        }
    }

    private static String[] splitOverride(String s) {
        int eq = s.indexOf('=');
        if (eq <= 0) fail("-E expects key=value, got: " + s);
        return new String[] { s.substring(0, eq), s.substring(eq + 1) };
    }

    private static void fail(String message) {
        ERR.println("lethe-elasticsearch: " + message);
        ERR.println("usage: run --home DIR --http-port PORT [-E key=value ...]");
        System.exit(2);
    }
}
