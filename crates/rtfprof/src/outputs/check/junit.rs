//! `--output junit:outfile=PATH`: JUnit XML, which CI systems (GitHub
//! Actions' test reporters, GitLab, Jenkins) show as test results: one
//! testcase a judged metric, a `<failure>` with the numbers for each
//! regression; a testcase a budget of the rules file and metric it judged
//! (`budget:LABEL`, a `<failure>` when exceeded, `<skipped>` when it
//! matched nothing); a skipped testcase an ignored metric. quick-xml's
//! writer escapes every name from the profile.

use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};

use super::{amount, p_value, percent};
use crate::check::{BudgetVerdict, Check, Verdict};

/// The document.
pub fn render(check: &Check) -> Vec<u8> {
    let mut writer = Writer::new_with_indent(Vec::new(), b' ', 2);
    // (Writing into a Vec cannot fail.)
    let _ = write(check, &mut writer);
    let mut bytes = writer.into_inner();
    bytes.push(b'\n');
    bytes
}

fn write(check: &Check, w: &mut Writer<Vec<u8>>) -> std::io::Result<()> {
    let cases: Vec<_> = check.rows.iter().filter(|r| !r.kind.is_count()).collect();
    let failures = cases.iter().filter(|r| r.verdict == Verdict::Regression).count() + check.exceeded().count();
    let unmatched = check.budgets.iter().filter(|b| b.verdict == BudgetVerdict::Unmatched).count();
    let skipped = cases.iter().filter(|r| r.verdict == Verdict::TooFewSteps).count() + unmatched + check.ignored.len();
    let tests = cases.len() + check.budgets.len() + check.ignored.len();
    let (tests, failures, skipped) = (tests.to_string(), failures.to_string(), skipped.to_string());
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let suite_attrs = [("name", "rtfprof check"), ("tests", tests.as_str()), ("failures", failures.as_str()), ("skipped", skipped.as_str())];
    w.write_event(Event::Start(BytesStart::new("testsuites").with_attributes(suite_attrs)))?;
    w.write_event(Event::Start(BytesStart::new("testsuite").with_attributes(suite_attrs)))?;
    let mut properties = vec![("baseline", check.baseline.as_str()), ("new", check.new.as_str())];
    if let Some(rules) = &check.options.rules {
        properties.push(("rules", rules.as_str()));
    }
    w.write_event(Event::Start(BytesStart::new("properties")))?;
    for (name, value) in properties {
        w.write_event(Event::Empty(BytesStart::new("property").with_attributes([("name", name), ("value", value)])))?;
    }
    w.write_event(Event::End(BytesEnd::new("properties")))?;
    for row in cases {
        let case =
            BytesStart::new("testcase").with_attributes([("classname", format!("rtfprof.check.{}", row.kind.as_str()).as_str()), ("name", row.label.as_str())]);
        let unit = row.kind.unit();
        let numbers = format!(
            "{}: median {} -> {} ({}), one-sided Mann-Whitney p={}, threshold {:.0}%, steps {}/{}",
            row.label,
            amount(row.baseline_median, unit),
            amount(row.new_median, unit),
            percent(row.change),
            p_value(row.p_value),
            row.threshold * 100.0,
            row.baseline_steps,
            row.new_steps
        );
        match row.verdict {
            Verdict::Regression => {
                w.write_event(Event::Start(case))?;
                let message = format!("{} regressed by {}", row.label, percent(row.change));
                w.write_event(Event::Start(BytesStart::new("failure").with_attributes([("message", message.as_str()), ("type", "regression")])))?;
                w.write_event(Event::Text(BytesText::new(&numbers)))?;
                w.write_event(Event::End(BytesEnd::new("failure")))?;
                w.write_event(Event::End(BytesEnd::new("testcase")))?;
            }
            Verdict::TooFewSteps => {
                w.write_event(Event::Start(case))?;
                w.write_event(Event::Empty(BytesStart::new("skipped").with_attributes([("message", "too few steps to judge")])))?;
                w.write_event(Event::End(BytesEnd::new("testcase")))?;
            }
            _ => {
                w.write_event(Event::Start(case))?;
                w.write_event(Event::Start(BytesStart::new("system-out")))?;
                w.write_event(Event::Text(BytesText::new(&numbers)))?;
                w.write_event(Event::End(BytesEnd::new("system-out")))?;
                w.write_event(Event::End(BytesEnd::new("testcase")))?;
            }
        }
    }
    for budget in &check.budgets {
        let label = budget.label.as_deref().unwrap_or("");
        let name = format!("budget:{}", if label.is_empty() { budget.rule.as_str() } else { label });
        let case = BytesStart::new("testcase").with_attributes([("classname", "rtfprof.check.budget"), ("name", name.as_str())]);
        w.write_event(Event::Start(case))?;
        let value = budget.value.map_or_else(|| "-".to_owned(), |v| amount(v, budget.unit));
        let numbers = format!("{label}: median {value}, budget {} (rule '{}'), steps {}", budget.max_text, budget.rule, budget.new_steps);
        match budget.verdict {
            BudgetVerdict::Exceeded => {
                let message = format!("{label} median {value} is over its budget {}", budget.max_text);
                w.write_event(Event::Start(BytesStart::new("failure").with_attributes([("message", message.as_str()), ("type", "budget")])))?;
                w.write_event(Event::Text(BytesText::new(&numbers)))?;
                w.write_event(Event::End(BytesEnd::new("failure")))?;
            }
            BudgetVerdict::Unmatched => {
                let message = format!("no metric of the new run matched the budget's regex '{}'", budget.rule);
                w.write_event(Event::Empty(BytesStart::new("skipped").with_attributes([("message", message.as_str())])))?;
            }
            BudgetVerdict::Within => {
                w.write_event(Event::Start(BytesStart::new("system-out")))?;
                w.write_event(Event::Text(BytesText::new(&numbers)))?;
                w.write_event(Event::End(BytesEnd::new("system-out")))?;
            }
        }
        w.write_event(Event::End(BytesEnd::new("testcase")))?;
    }
    for ignored in &check.ignored {
        let classname = format!("rtfprof.check.{}", ignored.kind.as_str());
        let case = BytesStart::new("testcase").with_attributes([("classname", classname.as_str()), ("name", ignored.label.as_str())]);
        w.write_event(Event::Start(case))?;
        let message = format!("ignored by the rules file (rule '{}')", ignored.rule);
        w.write_event(Event::Empty(BytesStart::new("skipped").with_attributes([("message", message.as_str())])))?;
        w.write_event(Event::End(BytesEnd::new("testcase")))?;
    }
    w.write_event(Event::End(BytesEnd::new("testsuite")))?;
    w.write_event(Event::End(BytesEnd::new("testsuites")))?;
    Ok(())
}
