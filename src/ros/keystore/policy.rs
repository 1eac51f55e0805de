//! SROS2 access-control policies (`ros2 security create_permission`'s POLICY.xml, format 0.2.0)
//! turned into the DDS permissions grant sros2's `permissions.xsl` makes of them: ROS names
//! become DDS topic names (`rt/`, `rq/…Request`, `rr/…Reply`, actions' five endpoints), DENY
//! rules ahead of ALLOW rules (the first matching rule decides), `ros_discovery_info` allowed
//! both ways (every rmw publishes and reads it), everything else denied by default.
//!
//! Pure text work, no cryptography: the grant is signed in `super::pki`.

use crate::error::{Error, Result};

/// Publish and subscribe topic lists of one rule.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Rule {
    pub publish: Vec<String>,
    pub subscribe: Vec<String>,
}

impl Rule {
    fn is_empty(&self) -> bool {
        self.publish.is_empty() && self.subscribe.is_empty()
    }
}

/// The DDS rules of one enclave: denials first, then what is allowed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Rules {
    pub deny: Rule,
    pub allow: Rule,
}

/// Every topic, both ways: what `create-enclave` grants, as sros2's default policy does.
pub fn allow_all() -> Rules {
    Rules {
        deny: Rule::default(),
        allow: Rule {
            publish: vec!["*".into()],
            subscribe: vec!["*".into()],
        },
    }
}

/// The rules the policy document `xml` gives `enclave` (e.g. `/talker_listener/talker`).
pub fn rules_for(xml: &str, enclave: &str) -> Result<Rules> {
    let doc = crate::xml::parse("policy", xml)?;
    let root = doc.root_element();
    if root.tag_name().name() != "policy" {
        return Err(Error::invalid(
            "policy",
            format!(
                "the root element is <{}>, not <policy>",
                root.tag_name().name()
            ),
        ));
    }
    let enclaves: Vec<_> = root
        .descendants()
        .filter(|n| n.has_tag_name("enclave"))
        .collect();
    let node = enclaves
        .iter()
        .find(|n| n.attribute("path") == Some(enclave))
        .ok_or_else(|| {
            let known: Vec<&str> = enclaves
                .iter()
                .filter_map(|n| n.attribute("path"))
                .collect();
            Error::invalid(
                "policy",
                format!("no <enclave path=\"{enclave}\"> (the policy has {known:?})"),
            )
        })?;
    let mut rules = Rules::default();
    for profile in node.descendants().filter(|n| n.has_tag_name("profile")) {
        let ns = profile.attribute("ns").unwrap_or("/");
        let name = profile.attribute("node").unwrap_or("");
        for group in profile.children().filter(|n| n.is_element()) {
            let kind = group.tag_name().name();
            let names: Vec<String> = group
                .children()
                .filter(|n| n.is_element())
                .filter_map(|n| n.text())
                .map(|t| qualify(t.trim(), ns, name))
                .collect();
            for (attr, verdict) in group.attributes().map(|a| (a.name(), a.value())) {
                let rule = match verdict {
                    "ALLOW" => &mut rules.allow,
                    "DENY" => &mut rules.deny,
                    other => {
                        return Err(Error::invalid(
                            "policy",
                            format!("<{kind} {attr}=\"{other}\">: expected ALLOW or DENY"),
                        ))
                    }
                };
                for fq in &names {
                    add(rule, kind, attr, fq)?;
                }
            }
        }
    }
    for rule in [&mut rules.allow, &mut rules.deny] {
        rule.publish.sort();
        rule.publish.dedup();
        rule.subscribe.sort();
        rule.subscribe.dedup();
    }
    Ok(rules)
}

/// A ROS name made absolute as rcl resolves it: `~` is the node's private namespace, a
/// relative name lives in the profile's namespace; wildcards stay as they are.
fn qualify(name: &str, ns: &str, node: &str) -> String {
    let ns = ns.trim_end_matches('/');
    if let Some(rest) = name.strip_prefix('~') {
        format!("{ns}/{node}{rest}")
    } else if name.starts_with('/') || name == "*" {
        name.to_string()
    } else {
        format!("{ns}/{name}")
    }
}

/// The DDS topics of one ROS name under one permission, as sros2's permissions.xsl lays them.
fn add(rule: &mut Rule, kind: &str, attr: &str, fq: &str) -> Result<()> {
    let action = |suffix: &str| format!("{fq}/_action/{suffix}");
    // What a client writes to an action, and what its server writes back.
    let to_server = || -> Vec<String> {
        ["send_goal", "cancel_goal", "get_result"]
            .map(|s| format!("rq{}", action(&format!("{s}Request"))))
            .to_vec()
    };
    let to_client = || -> Vec<String> {
        ["send_goal", "cancel_goal", "get_result"]
            .map(|s| format!("rr{}", action(&format!("{s}Reply"))))
            .into_iter()
            .chain(["feedback", "status"].map(|s| format!("rt{}", action(s))))
            .collect()
    };
    let (publish, subscribe): (Vec<String>, Vec<String>) = match (kind, attr) {
        ("topics", "publish") => (vec![format!("rt{fq}")], vec![]),
        ("topics", "subscribe") => (vec![], vec![format!("rt{fq}")]),
        ("services", "reply") => (vec![format!("rr{fq}Reply")], vec![format!("rq{fq}Request")]),
        ("services", "request") => (vec![format!("rq{fq}Request")], vec![format!("rr{fq}Reply")]),
        ("actions", "call") => (to_server(), to_client()),
        ("actions", "execute") => (to_client(), to_server()),
        _ => {
            return Err(Error::invalid(
                "policy",
                format!(
                    "<{kind} {attr}=...> is not a permission sros2 knows \
                 (topics: publish/subscribe, services: reply/request, actions: call/execute)"
                ),
            ))
        }
    };
    rule.publish.extend(publish);
    rule.subscribe.extend(subscribe);
    Ok(())
}

/// The signed document's text: one grant for `enclave` with `rules`, valid
/// `not_before..not_after` (`YYYY-MM-DDThh:mm:ss`), on domains 0..=230 (every domain rcl
/// accepts), `ros_discovery_info` allowed both ways, default DENY.
pub fn permissions_xml(enclave: &str, rules: &Rules, not_before: &str, not_after: &str) -> String {
    let domains = "<domains><id_range><min>0</min><max>230</max></id_range></domains>";
    let topics = |names: &[String]| -> String {
        names
            .iter()
            .map(|t| format!("<topic>{}</topic>", escape(t)))
            .collect()
    };
    let rule = |tag: &str, r: &Rule| -> String {
        if r.is_empty() {
            return String::new();
        }
        let mut s = format!("      <{tag}>\n        {domains}\n");
        if !r.publish.is_empty() {
            s += &format!(
                "        <publish><topics>{}</topics></publish>\n",
                topics(&r.publish)
            );
        }
        if !r.subscribe.is_empty() {
            s += &format!(
                "        <subscribe><topics>{}</topics></subscribe>\n",
                topics(&r.subscribe)
            );
        }
        s + &format!("      </{tag}>\n")
    };
    let mut allow = rules.allow.clone();
    allow.publish.push("ros_discovery_info".into());
    allow.subscribe.push("ros_discovery_info".into());
    let subject = escape(&format!("CN={enclave}"));
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <dds xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" \
         xsi:noNamespaceSchemaLocation=\"http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_permissions.xsd\">\n\
         \x20 <permissions>\n\
         \x20   <grant name=\"{name}\">\n\
         \x20     <subject_name>{subject}</subject_name>\n\
         \x20     <validity><not_before>{not_before}</not_before><not_after>{not_after}</not_after></validity>\n\
         {deny}{allow}\
         \x20     <default>DENY</default>\n\
         \x20   </grant>\n\
         \x20 </permissions>\n\
         </dds>\n",
        name = escape(enclave),
        deny = rule("deny_rule", &rules.deny),
        allow = rule("allow_rule", &allow),
    )
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// An ISO date-time (UTC, seconds) `days` from now, as permissions documents write validity.
pub fn iso_days_from_now(days: i64) -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
        + days * 86_400;
    let (days_since_epoch, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = civil_from_days(days_since_epoch);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Howard Hinnant's days-to-civil conversion (proleptic Gregorian calendar).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_the_proleptic_gregorian_calendar() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    const POLICY: &str = r#"<?xml version="1.0"?>
<policy version="0.2.0">
  <enclaves>
    <enclave path="/planner">
      <profiles>
        <profile ns="/" node="lee_planner">
          <topics subscribe="ALLOW"><topic>map</topic><topic>/tf</topic></topics>
          <topics publish="ALLOW"><topic>~/path</topic></topics>
          <topics publish="DENY"><topic>cmd_vel</topic></topics>
          <services reply="ALLOW"><service>~/get_plan</service></services>
          <actions execute="ALLOW"><action>compute_path_to_pose</action></actions>
        </profile>
      </profiles>
    </enclave>
    <enclave path="/other"><profiles/></enclave>
  </enclaves>
</policy>"#;

    #[test]
    fn names_become_dds_topics_as_sros2_lays_them() {
        let r = rules_for(POLICY, "/planner").unwrap();
        assert_eq!(r.deny.publish, vec!["rt/cmd_vel"]);
        assert!(r.allow.subscribe.contains(&"rt/map".to_string()));
        assert!(r.allow.subscribe.contains(&"rt/tf".to_string()));
        assert!(r.allow.publish.contains(&"rt/lee_planner/path".to_string()));
        assert!(r
            .allow
            .publish
            .contains(&"rr/lee_planner/get_planReply".to_string()));
        assert!(r
            .allow
            .subscribe
            .contains(&"rq/lee_planner/get_planRequest".to_string()));
        assert!(r
            .allow
            .subscribe
            .contains(&"rq/compute_path_to_pose/_action/send_goalRequest".to_string()));
        assert!(r
            .allow
            .publish
            .contains(&"rt/compute_path_to_pose/_action/status".to_string()));
    }

    #[test]
    fn deny_rules_come_first_and_discovery_is_always_allowed() {
        let r = rules_for(POLICY, "/planner").unwrap();
        let xml = permissions_xml("/planner", &r, "2026-01-01T00:00:00", "2036-01-01T00:00:00");
        let deny = xml.find("<deny_rule>").unwrap();
        let allow = xml.find("<allow_rule>").unwrap();
        assert!(deny < allow, "{xml}");
        assert!(xml.contains("<topic>ros_discovery_info</topic>"));
        assert!(xml.contains("<subject_name>CN=/planner</subject_name>"));
        assert!(xml.contains("<default>DENY</default>"));
        // The grant parses back as XML.
        roxmltree::Document::parse(&xml).unwrap();
    }

    #[test]
    fn an_unknown_enclave_or_verdict_is_refused_naming_it() {
        let e = rules_for(POLICY, "/nobody").unwrap_err().to_string();
        assert!(e.contains("/nobody") && e.contains("/planner"), "{e}");
        let bad = POLICY.replace("publish=\"DENY\"", "publish=\"MAYBE\"");
        let e = rules_for(&bad, "/planner").unwrap_err().to_string();
        assert!(e.contains("MAYBE"), "{e}");
        let e = rules_for("<nope/>", "/planner").unwrap_err().to_string();
        assert!(e.contains("<nope>"), "{e}");
    }
}
