package dev.lethe.stack.elasticsearch;

import org.elasticsearch.common.settings.Setting;
import org.elasticsearch.index.IndexService;
import org.elasticsearch.plugins.Plugin;

import java.util.List;

/**
 * Registers the test-only index setting {@code index.soft_deletes.retention_lease.sync_interval}
 * (defined by Elasticsearch itself, default 30s) so that tests can create indices whose retention
 * leases advance quickly, which lets deleted documents be merged away within seconds. Production
 * code must not depend on it: a real cluster rejects the setting.
 */
public class TestIndexSettingsPlugin extends Plugin {
    @Override
    public List<Setting<?>> getSettings() {
        return List.of(IndexService.RETENTION_LEASE_SYNC_INTERVAL_SETTING);
    }
}
