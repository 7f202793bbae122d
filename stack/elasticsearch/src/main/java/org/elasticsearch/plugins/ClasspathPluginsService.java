package org.elasticsearch.plugins;

import org.elasticsearch.Build;
import org.elasticsearch.action.admin.cluster.node.info.PluginsAndModules;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.plugins.spi.SPIClassIterator;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Lethe local stack: a plugins service whose plugins are plain classes already on the JVM class path
 * (no plugin bundles, no module layers). Lives in this package because the pieces it needs
 * ({@code LoadedPlugin}, {@code loadPlugin}, {@code loadExtensions}) are package-private.
 *
 * Every plugin shares the application class loader, so a service-provider lookup through any one of
 * them sees every provider declared on the class path. {@link #loadServiceProviders} therefore
 * instantiates each provider class once, instead of once per plugin as the base class would.
 */
public class ClasspathPluginsService extends PluginsService {

    private final List<LoadedPlugin> classpathPlugins;
    private final PluginsAndModules classpathInfo;

    public ClasspathPluginsService(Settings settings, Path configDir, Collection<Class<? extends Plugin>> pluginClasses) {
        super(settings, configDir, new PluginsLoader(Set.of(), Set.of(), Map.of()));
        String esVersion = Build.current().version();
        String javaVersion = Integer.toString(Runtime.version().feature());
        List<LoadedPlugin> loaded = new ArrayList<>();
        List<PluginRuntimeInfo> infos = new ArrayList<>();
        for (Class<? extends Plugin> pluginClass : pluginClasses) {
            PluginDescriptor descriptor = new PluginDescriptor(
                pluginClass.getName(),          // name
                "classpath plugin " + pluginClass.getSimpleName(), // description
                "NA",                           // plugin version
                esVersion,                      // elasticsearch version
                javaVersion,                    // java version
                pluginClass.getName(),          // class name
                null,                           // module name: not modular
                List.of(),                      // extended plugins
                false,                          // has native controller
                false,                          // licensed
                false,                          // modular
                false                           // stable API plugin
            );
            Plugin instance = loadPlugin(pluginClass, settings, configDir);
            loaded.add(new LoadedPlugin(descriptor, instance, pluginClass.getClassLoader()));
            infos.add(new PluginRuntimeInfo(descriptor));
        }
        loadExtensions(loaded);
        this.classpathPlugins = Collections.unmodifiableList(loaded);
        this.classpathInfo = new PluginsAndModules(infos, List.of());
    }

    @Override
    protected List<LoadedPlugin> plugins() {
        return classpathPlugins;
    }

    @Override
    public PluginsAndModules info() {
        return classpathInfo;
    }

    @Override
    public <T> List<? extends T> loadServiceProviders(Class<T> service) {
        // Collect each provider class once, in class-path order, remembering which plugin's loader saw it.
        Map<Class<? extends T>, List<Plugin>> candidates = new HashMap<>();
        Set<Class<? extends T>> order = new LinkedHashSet<>();
        for (LoadedPlugin plugin : classpathPlugins) {
            ClassLoader loader = plugin.instance().getClass().getClassLoader();
            SPIClassIterator<T> it = SPIClassIterator.get(service, loader);
            while (it.hasNext()) {
                Class<? extends T> providerClass = it.next();
                order.add(providerClass);
                candidates.computeIfAbsent(providerClass, k -> new ArrayList<>()).add(plugin.instance());
            }
        }
        List<T> result = new ArrayList<>();
        for (Class<? extends T> providerClass : order) {
            RuntimeException lastFailure = null;
            T created = null;
            // A provider constructor may take a specific plugin type; try each plugin until one fits.
            for (Plugin plugin : candidates.get(providerClass)) {
                try {
                    created = createExtension(providerClass, service, plugin);
                    break;
                } catch (RuntimeException e) {
                    lastFailure = e;
                }
            }
            if (created == null) {
                throw lastFailure != null ? lastFailure : new IllegalStateException("cannot create " + providerClass);
            }
            result.add(created);
        }
        return Collections.unmodifiableList(result);
    }
}
