//! Network partitions: each etcd member in its own network namespace, joined to the test's
//! namespace by a veth pair on one bridge (the replicas and the clients stay on loopback and
//! reach the members through the bridge). Cutting a member takes its link down: its peers and
//! the replicas lose it with no reset, as with a real partition. Needs root and `ip`; where
//! `ip netns add` fails the suite says why and runs without partitions. Names carry the
//! process id, so parallel runs do not collide; everything is removed on drop.

use std::process::Command;

/// The namespaces, links and bridge of one run.
pub(crate) struct Network {
    id: u32,
    members: usize,
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("ip {}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl Network {
    /// A bridge and `members` namespaces on it, or why not.
    pub(crate) fn create(members: usize) -> Result<Network, String> {
        let id = std::process::id() % 100_000;
        let net = Network { id, members };
        // On failure, dropping `net` removes what was made.
        net.setup()?;
        Ok(net)
    }

    fn bridge(&self) -> String {
        format!("fzb{}", self.id)
    }

    fn link(&self, i: usize) -> String {
        format!("fzv{}x{i}", self.id)
    }

    fn namespace(&self, i: usize) -> String {
        format!("fz{}x{i}", self.id)
    }

    /// 10.X.Y.0/24, from the process id: two runs never share a subnet.
    fn address(&self, host: usize) -> String {
        format!("10.{}.{}.{host}", 200 + self.id / 2000 % 50, self.id % 250)
    }

    fn setup(&self) -> Result<(), String> {
        let bridge = self.bridge();
        ip(&["link", "add", &bridge, "type", "bridge"])?;
        ip(&[
            "addr",
            "add",
            &format!("{}/24", self.address(1)),
            "dev",
            &bridge,
        ])?;
        ip(&["link", "set", &bridge, "up"])?;
        for i in 0..self.members {
            let (ns, link, peer) = (
                self.namespace(i),
                self.link(i),
                format!("fzp{}x{i}", self.id),
            );
            ip(&["netns", "add", &ns])?;
            ip(&["link", "add", &link, "type", "veth", "peer", "name", &peer])?;
            ip(&["link", "set", &peer, "netns", &ns])?;
            ip(&["link", "set", &link, "master", &bridge])?;
            ip(&["link", "set", &link, "up"])?;
            let addr = format!("{}/24", self.address(i + 2));
            ip(&[
                "netns", "exec", &ns, "ip", "addr", "add", &addr, "dev", &peer,
            ])?;
            ip(&["netns", "exec", &ns, "ip", "link", "set", &peer, "up"])?;
            ip(&["netns", "exec", &ns, "ip", "link", "set", "lo", "up"])?;
        }
        Ok(())
    }

    /// Where member `i` listens, and its namespace: what `Etcd::cluster_at` takes.
    pub(crate) fn hosts(&self) -> Vec<(String, Option<String>)> {
        (0..self.members)
            .map(|i| (self.address(i + 2), Some(self.namespace(i))))
            .collect()
    }

    /// Cuts member `i` off (`up: false`) or joins it again.
    pub(crate) fn set(&self, i: usize, up: bool) -> Result<(), String> {
        ip(&["link", "set", &self.link(i), if up { "up" } else { "down" }])
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        for i in 0..self.members {
            let _ = ip(&["link", "del", &self.link(i)]);
            let _ = ip(&["netns", "del", &self.namespace(i)]);
        }
        let _ = ip(&["link", "del", &self.bridge()]);
    }
}
