package org.elasticsearch.node;

import org.elasticsearch.env.Environment;
import org.elasticsearch.plugins.ClasspathPluginsService;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.plugins.PluginsLoader;
import org.elasticsearch.plugins.PluginsService;

import java.util.Collection;
import java.util.List;

/**
 * Lethe local stack: builds a {@link Node} whose plugins are classes on the class path. Lives in this
 * package because {@code NodeServiceProvider}, {@code NodeConstruction.prepareConstruction} and the
 * {@code Node(NodeConstruction)} constructor are package-private.
 */
public final class ClasspathNodeServiceProvider extends NodeServiceProvider {

    private final List<Class<? extends Plugin>> pluginClasses;

    private ClasspathNodeServiceProvider(Collection<Class<? extends Plugin>> pluginClasses) {
        this.pluginClasses = List.copyOf(pluginClasses);
    }

    @Override
    PluginsService newPluginService(Environment environment, PluginsLoader pluginsLoader) {
        return new ClasspathPluginsService(environment.settings(), environment.configDir(), pluginClasses);
    }

    /** Creates (but does not start) a node with the given class-path plugins. */
    public static Node newNode(Environment environment, Collection<Class<? extends Plugin>> pluginClasses) {
        NodeConstruction construction = NodeConstruction.prepareConstruction(
            environment,
            null,
            new ClasspathNodeServiceProvider(pluginClasses),
            true
        );
        return new Node(construction);
    }
}
