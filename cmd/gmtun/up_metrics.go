package main

import (
	"fmt"

	"github.com/gmtun/gmtun/internal/metrics"
)

// metricsServer is the daemon's Prometheus endpoint (interface.metrics_listen).
type metricsServer = *metrics.Server

// startMetrics serves the Prometheus metrics when metrics_listen is set.
// A scrape takes one snapshot through d.status, as `gmtun show` does:
// nothing is counted per packet for it. A change of metrics_listen needs
// a restart (restartKeys).
func (d *daemon) startMetrics() error {
	l := d.cfg.Interface.MetricsListen
	if !l.Enabled() {
		return nil
	}
	srv, err := metrics.Listen(l.Network, l.Address, metrics.NewCollector(d.name, versionString(), d.status), d.log.Errorf)
	if err != nil {
		return fmt.Errorf("up: cannot serve metrics on %s (interface.metrics_listen): %w", l, err)
	}
	d.metrics = srv
	d.log.Infof("metrics on %s%s", l, metrics.Path)
	return nil
}

// stopMetrics closes the metrics server, if any.
func (d *daemon) stopMetrics() {
	if d.metrics == nil {
		return
	}
	if err := d.metrics.Close(); err != nil {
		d.log.Debugf("closing the metrics server: %v", err)
	}
	d.metrics = nil
}
